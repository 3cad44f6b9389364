// Linux's epoll, which Swift's Glibc module leaves out, for the benchmarks' raw socket reader.
#ifdef __linux__
#include <sys/epoll.h>
#endif
