"""The live metrics panel: figures the runtime measures, sampled while a reply streams."""
