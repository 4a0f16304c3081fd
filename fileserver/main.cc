// pathwarden-fs [--policy F]... [--log FILE] [-f] [-o OPTS] BACKING_DIR MOUNTPOINT

#include <cstdio>

#include "fileserver/server.h"

int main(int argc, char** argv) {
  auto o = pathwarden::fileserver::ParseOptions(argc, argv);
  if (!o) {
    std::fprintf(stderr, "pathwarden-fs: %s\n", o.error().c_str());
    return 2;
  }
  return pathwarden::fileserver::Serve(*o);
}
