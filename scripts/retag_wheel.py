"""Copy a wheel with another platform tag: `python3 retag_wheel.py WHEEL linux_aarch64 DIR`.

scripts/arm64-check.sh cross-compiles llama-cpp-python on x86-64; pip tags the wheel with
the machine that built it. Its content is Python and shared libraries loaded by ctypes (no
CPython extension), so the aarch64 libraries inside only need the right tag outside: in
the file name, in WHEEL, and in RECORD's line for WHEEL.
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path


def retag(wheel: Path, platform: str, folder: Path) -> Path:
    name, version, python, abi, _ = wheel.name[: -len(".whl")].split("-")
    target = folder / f"{name}-{version}-{python}-{abi}-{platform}.whl"
    with (
        zipfile.ZipFile(wheel) as source,
        zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        info_dir = f"{name}-{version}.dist-info/"
        data = {item.filename: source.read(item) for item in source.infolist()}
        lines = data[info_dir + "WHEEL"].decode().splitlines()
        tags = [
            f"Tag: {python}-{abi}-{platform}" if line.startswith("Tag:") else line for line in lines
        ]
        data[info_dir + "WHEEL"] = ("\n".join(dict.fromkeys(tags)) + "\n").encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data[info_dir + "WHEEL"]).digest())
        record = [
            f"{info_dir}WHEEL,sha256={digest.rstrip(b'=').decode()},{len(data[info_dir + 'WHEEL'])}"
            if line.startswith(info_dir + "WHEEL,")
            else line
            for line in data[info_dir + "RECORD"].decode().splitlines()
        ]
        data[info_dir + "RECORD"] = ("\n".join(record) + "\n").encode()
        for item in source.infolist():
            out.writestr(item, data[item.filename])
    return target


if __name__ == "__main__":
    print(retag(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])))
