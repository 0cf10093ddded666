/* Extra library of the loader tests: one symbol of its own, one that the
 * primary also exports (the primary's must win). */
int dl_extra_only(void) { return 2; }
int dl_shared(void) { return 2; }
