"""``python -m builder_utils.clevr.synth --out DIR --num_scenes N --seed S --splits train,val``."""

import sys

from .folder import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m builder_utils.clevr.synth"))
