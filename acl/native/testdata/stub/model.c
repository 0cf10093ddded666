/* Stub libascendcl, model API. */
#include "stub.h"

void model_reset(void) {}
