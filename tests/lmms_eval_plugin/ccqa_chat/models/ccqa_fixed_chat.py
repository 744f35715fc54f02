"""``ccqa_fixed_chat``: a chat-type lmms-eval model (``is_simple = False``) that answers from a
fixed list, deterministically. lmms-eval ships no chat dummy; this one takes the requests that
``ConfigurableMessagesTask`` builds, validates each ``doc_to_messages`` result against
``lmms_eval.protocol.ChatMessages`` (so a task whose messages do not validate fails the run) and
keeps what they held.

``responses`` (``--model_args responses=2|yes|It is metal.``): the answers, ``|``-separated; the
request for document ``i`` of a task gets answer ``i`` modulo their number, whatever the order
or batching of the requests.

>>> FixedChat(responses="2|yes").answer(3)
'yes'
"""

from __future__ import annotations

from lmms_eval.api.model import lmms
from lmms_eval.protocol import ChatMessages


class FixedChat(lmms):
    """A chat model answering ``responses[doc_id % len(responses)]``; ``seen[task]`` holds, per
    request, the content part types, images and audio clips of its messages."""

    is_simple = False

    def __init__(self, responses: str = "2", response: str | None = None, **kwargs):
        super().__init__()
        self.responses = [response] if response is not None else str(responses).split("|")
        self.seen: dict[str, list] = {}

    def answer(self, doc_id: int) -> str:
        return self.responses[doc_id % len(self.responses)]

    def generate_until(self, requests) -> list[str]:
        out = []
        for _, doc_to_messages, _, doc_id, task, split in (request.args for request in requests):
            messages = ChatMessages(messages=doc_to_messages(self.task_dict[task][split][doc_id]))
            images, _, audios = messages.extract_media()
            parts = [content["type"] for message in messages.to_hf_messages() for content in message["content"]]
            self.seen.setdefault(task, []).append((parts, images, audios))
            out.append(self.answer(doc_id))
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError("generation tasks only")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError("single-turn tasks only")
