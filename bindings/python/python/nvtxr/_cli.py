"""The ``nvtxr`` command (``nvtxr record``, ``report``, ``view``) of a wheel
built with ``cargo xtask wheel``: runs the ``nvtxr`` program bundled beside
this package (``_bin/``, its recording tool ``libnvtxr_record.so`` next to
it)."""

import os
import sys


def main():
    program = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "nvtxr")
    if not os.access(program, os.X_OK):
        sys.exit(
            "nvtxr: this install of the Python package has no recorder; install a wheel "
            "built with `cargo xtask wheel`, or nvtxr itself (`cargo xtask install`)"
        )
    os.execv(program, [program, *sys.argv[1:]])


if __name__ == "__main__":
    main()
