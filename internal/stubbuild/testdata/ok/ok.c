/* A library that compiles; VALUE can be changed with -D. */
#ifndef VALUE
#define VALUE 7
#endif
int stubbuild_value(void) { return VALUE; }
