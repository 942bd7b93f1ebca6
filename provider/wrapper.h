/* The provider-side core headers that bindgen turns into Rust (see build.rs). */
#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/core_object.h>
