/* gasnet_ratomic.h: the GASNet-EX specification's header for remote
 * atomics (gex_AD_t, gex_AD_Create, gex_AD_OpNB_*, gex_AD_OpNBI_* and the
 * rest of gex_AD_*). gasnet-ofi's gasnetex.h declares them already, so
 * this header includes it: a program may include either or both
 * (docs/c-api.md). */
#ifndef GASNET_RATOMIC_H
#define GASNET_RATOMIC_H
#include <gasnetex.h>
#endif /* GASNET_RATOMIC_H */
