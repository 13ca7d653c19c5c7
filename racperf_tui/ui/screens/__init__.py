"""Full screens (a run live, its result, a group, New run and its form, help) and the
modal screens they open."""
