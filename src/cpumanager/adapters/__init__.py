"""Side effects: sysfs, files, runtimes. Each module implements one port."""
