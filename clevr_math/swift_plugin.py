"""ms-swift plugin: ``swift rlhf --rlhf_type grpo --external_plugins <this file> --reward_funcs
clevr_math_accuracy clevr_math_format`` on the ``swift`` configuration (needs ms-swift; ``make test-swift``).
"""

from swift.rewards import orms

from clevr_math.trainer_rewards import SwiftAccuracy, SwiftFormat

orms["clevr_math_accuracy"] = SwiftAccuracy
orms["clevr_math_format"] = SwiftFormat
