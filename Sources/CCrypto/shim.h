#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

// OPENSSL_free is a function-like macro (CRYPTO_free with __FILE__/__LINE__).
static inline void ccrypto_free(void *_Nullable p) { OPENSSL_free(p); }
#endif
