// A C target needs a source file; everything it offers is in include/CEpoll.h.
#include "CEpoll.h"
