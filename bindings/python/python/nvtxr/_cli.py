"""The ``nvtxr`` command (``nvtxr record``, ``report``, ``view``) of the
Python package: the command itself, built into the package's native module
(with the recording tool it injects), so ``pip install`` of a wheel or of
the source gives a command that records."""

import sys


def main():
    from nvtxr._native import _command

    sys.exit(_command(sys.argv))


if __name__ == "__main__":
    main()
