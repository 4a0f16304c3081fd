// Queries: one request in the words of a command line or of a line of a
// batch file ("open /etc/shadow O_RDONLY", "rename a b RENAME_NOREPLACE"),
// the operations and flags of scenario steps.
//
// The grammar (tokens separated by blanks; a token in double quotes may
// hold blanks, with the C escapes \" \\ \a \b \t \n \v \f \r and \ooo (one
// to three octal digits: any byte but NUL), those names are printed with
// (src/input/text_quote.h); a token made only of known flag names joined
// by '|' is the flags wherever it stands after PATH; every flag each
// operation takes: Grammar()):
//
//   open PATH [FLAGS] [MODE]        O_RDONLY by default; octal MODE for
//                                   O_CREAT (0644 by default)
//   stat|lstat|exec_check PATH [FLAGS]
//   readlink|chdir PATH
//   access PATH [R_OK|W_OK|X_OK|F_OK|AT_EACCESS|AT_SYMLINK_NOFOLLOW]
//                                   F_OK by default
//   mkdir PATH [MODE]               0755 by default
//   mknod PATH file|fifo|socket [MODE]   0644 by default
//   symlink PATH TARGET
//   link PATH PATH2 [AT_SYMLINK_FOLLOW]
//   rename PATH PATH2 [RENAME_NOREPLACE|RENAME_EXCHANGE|RENAME_WHITEOUT]
//   unlink PATH [AT_REMOVEDIR]
//   rmdir|truncate PATH
//   chmod PATH MODE [FLAGS]
//   chown|lchown PATH UID:GID [FLAGS]   -1 keeps
//   getxattr|removexattr PATH NAME [FLAGS]; listxattr PATH [FLAGS];
//   setxattr PATH NAME [VALUE] [FLAGS]
//   bind_tcp|connect_tcp PORT

#ifndef PATHWARDEN_SRC_QUERY_QUERY_H_
#define PATHWARDEN_SRC_QUERY_QUERY_H_

#include <string>
#include <string_view>
#include <vector>

#include "pathwarden/request.h"
#include "pathwarden/result.h"

namespace pathwarden::query {

// Token
//
// One word of a query, and the column (1-based) it starts at.
struct Token {
  std::string text;
  size_t col = 1;
};

// Tokenize()
//
// The tokens of one line. Errors: "COL: message" (an unclosed quote, an
// unknown escape, a NUL byte).
Result<std::vector<Token>, std::string> Tokenize(std::string_view line);

// Query
//
// A parsed query: the operation's name and its paths as written (echoed
// in answers), and the request.
struct Query {
  std::string op;
  std::string path;
  std::string path2;  // link, rename; symlink's target
  Request request;
  // Whether the call changes nothing on the host (what --verify may run
  // anywhere).
  bool read_only = false;
};

// ParseQuery()
//
// Errors: "COL: message" (an unknown operation or flag, a missing or
// extra argument, a bad mode, id or port).
Result<Query, std::string> ParseQuery(const std::vector<Token>& tokens);

// ParseQueryLine()
//
// Tokenize() then ParseQuery().
Result<Query, std::string> ParseQueryLine(std::string_view line);

// Grammar()
//
// The grammar, one line per form with every flag name it takes, from the
// tables ParseQuery() reads ("access PATH [F_OK|R_OK|...|AT_EMPTY_PATH]
// (F_OK by default)"): explain --help lists it.
std::vector<std::string> Grammar();

}  // namespace pathwarden::query

#endif  // PATHWARDEN_SRC_QUERY_QUERY_H_
