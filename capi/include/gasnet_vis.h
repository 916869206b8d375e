/* gasnet_vis.h: the GASNet-EX specification's header for VIS, the
 * vector, indexed and strided transfers (gex_VIS_*). gasnet-ofi's
 * gasnetex.h declares them already, so this header includes it: a program
 * may include either or both (docs/c-api.md). GASNet-1's VIS
 * (gasnet_putv_*, gasnet_puti_*, gasnet_puts_* and the gets, with
 * gasnet_memvec_t) is in gasnet.h, with the rest of GASNet-1, so a GASNet-1
 * program that includes gasnet.h then gasnet_vis.h has it.
 * gex_VIS_SetPeerCompletionHandler is not provided. */
#ifndef GASNET_VIS_H
#define GASNET_VIS_H
#include <gasnetex.h>
#endif /* GASNET_VIS_H */
