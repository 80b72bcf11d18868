"""System configurations (configs/*.toml): load, validate, place, describe.

The public face of the package; the parts live in its modules, lowest first:
  model       the resolved form (SystemConfig, Partition, ...), the limits, ConfigError
  payload     the arm64 Image header and where kernel, initramfs and DTB go in a partition's RAM
  images      build steps that produce image files; the Debian kernel lookup `load` is given
  fields      TOML values (sizes, addresses) and error reporting
  partitions  one [[partition]] checked on its own
  place       the checks across partitions and the RAM placement
  load        `load` / `loads`: the whole file
  describe    what `./rtmux check` prints
Modules inside the package import each other directly, never this facade.
"""

from rtmux.config.describe import describe
from rtmux.config.fields import parse_address, parse_size
from rtmux.config.images import KernelLookup, build_products
from rtmux.config.load import load, loads
from rtmux.config.model import (
    DEFAULT_CONFIG,
    DMA_IOMMU,
    DMA_MODES,
    DMA_NONE,
    DMA_UNRESTRICTED,
    FAULT_POLICIES,
    FAULT_RESTART,
    FAULT_STOP,
    KIND_LINUX,
    KIND_RTOS,
    KINDS,
    LINUX_FAULT_BOOTARGS,
    MAX_CPUS,
    MAX_DEVICES,
    MAX_IRQS,
    MAX_NAME,
    MAX_PARTITION_CPUS,
    MAX_PARTITIONS,
    MAX_STREAMS,
    VIEW_ALL,
    VIEW_AUTO,
    VIEW_FOCUS,
    VIEWS,
    AssignedDevice,
    ConfigError,
    Console,
    FaultPolicy,
    Image,
    Mapping,
    Partition,
    SystemConfig,
    linux_bootargs,
)
from rtmux.config.payload import (
    ARM64_HEADER,
    Arm64Header,
    PayloadLayout,
    layout_for,
    payload_layout,
    read_arm64_header,
)

__all__ = [
    "ARM64_HEADER",
    "DEFAULT_CONFIG",
    "DMA_IOMMU",
    "DMA_MODES",
    "DMA_NONE",
    "DMA_UNRESTRICTED",
    "FAULT_POLICIES",
    "FAULT_RESTART",
    "FAULT_STOP",
    "KINDS",
    "KIND_LINUX",
    "KIND_RTOS",
    "LINUX_FAULT_BOOTARGS",
    "MAX_CPUS",
    "MAX_DEVICES",
    "MAX_IRQS",
    "MAX_NAME",
    "MAX_PARTITIONS",
    "MAX_PARTITION_CPUS",
    "MAX_STREAMS",
    "VIEWS",
    "VIEW_ALL",
    "VIEW_AUTO",
    "VIEW_FOCUS",
    "Arm64Header",
    "AssignedDevice",
    "ConfigError",
    "Console",
    "FaultPolicy",
    "Image",
    "KernelLookup",
    "Mapping",
    "Partition",
    "PayloadLayout",
    "SystemConfig",
    "build_products",
    "describe",
    "layout_for",
    "linux_bootargs",
    "load",
    "loads",
    "parse_address",
    "parse_size",
    "payload_layout",
    "read_arm64_header",
]
