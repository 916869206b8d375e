/* gasnet_coll.h: the GASNet-EX specification's header for the collectives
 * (gex_Coll_BroadcastNB, gex_Coll_ReduceToOneNB, gex_Coll_ReduceToAllNB,
 * gex_Coll_ReduceFn_t). gasnet-ofi's gasnetex.h declares them already, so
 * this header includes it: a program may include either or both
 * (docs/c-api.md). GASNet-1's gasnet_coll_* are not provided (GASNet-EX
 * dropped them too). */
#ifndef GASNET_COLL_H
#define GASNET_COLL_H
#include <gasnetex.h>
#endif /* GASNET_COLL_H */
