"""What a user reads as an error must not be printed for nothing (issue 38): importing the library
with transformers and bitsandbytes prints no notice about an optional hub kernel."""

import subprocess
import sys


def test_no_offline_kernel_notice_on_import():
    result = subprocess.run([sys.executable, "-c", "import wikimem_platform, transformers, bitsandbytes"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "gemm_4bit_forward" not in result.stderr + result.stdout
