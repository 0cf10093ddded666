/* Primary library of the loader tests. */
int dl_primary_only(void) { return 1; }
int dl_shared(void) { return 1; }
