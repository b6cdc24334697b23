"""Bytes per element of the dtypes a capture names (``torch.float32``), read without torch."""

_ITEMSIZE_BYTES = {
    "float64": 8, "double": 8, "int64": 8, "long": 8, "complex64": 8, "complex128": 16,
    "float32": 4, "float": 4, "int32": 4, "int": 4, "uint32": 4,
    "bfloat16": 2, "float16": 2, "half": 2, "int16": 2, "uint16": 2,
    "int8": 1, "uint8": 1, "bool": 1,
}  # fmt: skip


def itemsize_bytes(dtype: str) -> int | None:
    """Bytes per element of a ``torch.<dtype>`` string; ``None`` when unknown."""
    name = dtype.removeprefix("torch.")
    if name.startswith("float8"):
        return 1
    return _ITEMSIZE_BYTES.get(name)
