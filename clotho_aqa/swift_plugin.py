"""ms-swift plugin: ``swift rlhf --rlhf_type grpo --external_plugins <this file> --reward_funcs
clotho_aqa_accuracy clotho_aqa_format`` on the ``swift`` configuration (needs ms-swift; ``make test-swift``).
"""

from swift.rewards import orms

from clotho_aqa.trainer_rewards import SwiftAccuracy, SwiftFormat

orms["clotho_aqa_accuracy"] = SwiftAccuracy
orms["clotho_aqa_format"] = SwiftFormat
