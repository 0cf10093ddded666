/* Does not compile: the build must fail with the compiler's output. */
int stubbuild_broken(void) { return undeclared_identifier; }
