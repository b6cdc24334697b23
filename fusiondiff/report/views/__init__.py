"""What a report shows beside the findings, as data the formats render: the block level, the environment, speed of light, Thunder's traces, the memory traffic, the narrowing options."""
