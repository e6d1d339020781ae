#!/usr/bin/env python3
"""Prints the path of the CUDA toolkit's libdevice.10.bc for the nvcc given, or nothing.

nvcc may be a wrapper script outside the toolkit (Debian-style /usr/local/bin/nvcc, or a
distribution's /usr/bin/nvcc), so the toolkit's folder is asked of nvcc itself: its dry run
prints NVVMIR_LIBRARY_DIR, the folder it hands to the device compiler. The usual install folders
are the fallback."""
import os
import subprocess
import sys
import tempfile


def from_dry_run(nvcc):
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "empty.cu")
        open(source, "w").close()
        try:
            run = subprocess.run([nvcc, "-dryrun", "-c", source, "-o", os.path.join(tmp, "empty.o")],
                                 capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return []
    found = []
    for line in (run.stdout + run.stderr).splitlines():
        key, _, value = line.removeprefix("#$ ").partition("=")
        if key.strip() == "NVVMIR_LIBRARY_DIR":
            found.append(value.strip())
    return found


def main():
    nvcc = sys.argv[1]
    folders = from_dry_run(nvcc)
    folders.append(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "nvvm", "libdevice"))
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            folders.append(os.path.join(os.environ[env], "nvvm", "libdevice"))
    folders += ["/usr/local/cuda/nvvm/libdevice", "/usr/lib/nvidia-cuda-toolkit/libdevice"]
    for folder in folders:
        candidate = os.path.normpath(os.path.join(folder, "libdevice.10.bc"))
        if os.path.isfile(candidate):
            print(candidate)
            return


main()
