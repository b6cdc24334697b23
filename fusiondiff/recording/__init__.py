"""What live capture and replay share: the nvFuser adapter, input metadata, the timing protocol,
the kernel-record sources and the recorder that turns executions into records."""
