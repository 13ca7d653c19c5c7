"""The write guard and the kernel's net under it: may this target be written (safety,
target_guard), who else has it open (openfds), the device jail (devjail) and the write watch."""
