"""What the benchmark scripts print about the machine their figures come from."""
import platform


def cpu_model():
    """The CPU's model name as /proc/cpuinfo gives it ("AMD EPYC")."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()
