#include "runtime/gpu/launch.h"
