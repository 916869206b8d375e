/* gasnet.h: GASNet's legacy header name; everything is in gasnetex.h. */
#ifndef GASNET_H
#define GASNET_H
#include <gasnetex.h>
#endif
