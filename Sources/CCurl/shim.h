#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>

// curl_easy_setopt / curl_easy_getinfo are C variadic functions, which Swift cannot import.
// These typed, non-variadic wrappers are imported instead.
static inline CURLcode ccurl_setopt_long(CURL *_Nonnull h, CURLoption o, long v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode ccurl_setopt_string(CURL *_Nonnull h, CURLoption o, const char *_Nullable v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode ccurl_setopt_pointer(CURL *_Nonnull h, CURLoption o, void *_Nullable v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode ccurl_setopt_slist(CURL *_Nonnull h, CURLoption o, struct curl_slist *_Nullable v) {
    return curl_easy_setopt(h, o, v);
}
typedef size_t (*ccurl_data_callback)(char *_Nonnull ptr, size_t size, size_t nmemb, void *_Nullable userdata);
static inline CURLcode ccurl_setopt_write_function(CURL *_Nonnull h, ccurl_data_callback _Nullable cb) {
    return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb);
}
static inline CURLcode ccurl_setopt_header_function(CURL *_Nonnull h, ccurl_data_callback _Nullable cb) {
    return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, cb);
}
static inline CURLcode ccurl_getinfo_long(CURL *_Nonnull h, CURLINFO i, long *_Nonnull out) {
    return curl_easy_getinfo(h, i, out);
}

#endif
