// File: pathwarden/export.h
//
// What libpathwarden.so exports. The library is built with hidden
// visibility (-fvisibility=hidden): only the C API (pathwarden.h, each
// function marked PATHWARDEN_EXPORT) and the C++ API (every declaration
// of the other public headers, between PATHWARDEN_API_BEGIN and
// PATHWARDEN_API_END) are visible to its users; the engine is not.
// Consumers need nothing from here: the macros only give visibility.
//
// Example:
//   PATHWARDEN_EXPORT int pathwarden_model_new(...);
//   PATHWARDEN_API_BEGIN
//   namespace pathwarden { class Model { ... }; }
//   PATHWARDEN_API_END

#ifndef PATHWARDEN_EXPORT_H_
#define PATHWARDEN_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define PATHWARDEN_EXPORT __attribute__((visibility("default")))
#define PATHWARDEN_API_BEGIN _Pragma("GCC visibility push(default)")
#define PATHWARDEN_API_END _Pragma("GCC visibility pop")
#else
#define PATHWARDEN_EXPORT
#define PATHWARDEN_API_BEGIN
#define PATHWARDEN_API_END
#endif

#endif  // PATHWARDEN_EXPORT_H_
