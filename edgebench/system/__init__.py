"""What edgebench reads off the machine: the device block, a process's memory, the CPU
share other processes took, package versions and the git commit. Nothing here knows
about models, tasks or runs."""
