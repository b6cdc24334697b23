"""The notebook's public path, ``import fusiondiff.notebook as fdn`` (docs, notebooks): the module
itself is :mod:`fusiondiff.front.notebook`, one of the fronts."""

import sys

from fusiondiff.front import notebook

sys.modules[__name__] = notebook
