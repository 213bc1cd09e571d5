"""Regenerate autostatic_runtime/static/framework_pb2.py from framework.proto.

    python -m venv /tmp/protoc-env && /tmp/protoc-env/bin/pip install "grpcio-tools==1.62.3"
    /tmp/protoc-env/bin/python tools/gen_proto.py

The generated module is checked in so users need only the protobuf runtime. It is made with
protoc 25 (grpcio-tools 1.62): that gencode carries no runtime-version check, so it loads on
every protobuf runtime from 4.25 to 7.x (the range pyproject.toml allows); newer protoc
releases emit code that refuses runtimes older than themselves.
"""

from __future__ import annotations

import os
import sys

from grpc_tools import protoc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATIC = os.path.join(ROOT, "autostatic_runtime", "static")


def main() -> int:
    code = protoc.main(
        ["protoc", f"-I{STATIC}", f"--python_out={STATIC}", os.path.join(STATIC, "framework.proto")]
    )
    if code:
        print("protoc failed", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
