"""Disks: /proc/diskstats and sysfs under a root dir, iostat's math and sampler, and the
per-device model (history, await colours, saturation) every view of iostat shares."""
