/* gasnet_vis.h: the GASNet-EX specification's header for VIS, the
 * vector, indexed and strided transfers (gex_VIS_*). gasnet-ofi's
 * gasnetex.h declares them already, so this header includes it: a program
 * may include either or both (docs/c-api.md). GASNet-1's VIS
 * (gasnet_putv_*, gasnet_puti_*, gasnet_puts_* and the gets) and
 * gex_VIS_SetPeerCompletionHandler are not provided. */
#ifndef GASNET_VIS_H
#define GASNET_VIS_H
#include <gasnetex.h>
#endif /* GASNET_VIS_H */
