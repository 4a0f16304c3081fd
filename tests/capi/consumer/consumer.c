/* A C99 program that links libpathwarden as its users do (tests/capi/
 * install_test.sh builds it against an installed prefix, with CMake and
 * with pkg-config): it builds a tree, asks whether uid 34 may read a key
 * in a 0700 home, and checks the answer: EACCES from the walk, with a
 * reason, the refused component, and a Landlock layer's blocker. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pathwarden/pathwarden.h>

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "consumer.c:%d: %s failed (last error: %s)\n", __LINE__, \
              #cond, pathwarden_last_error());                                \
      return 1;                                                               \
    }                                                                         \
  } while (0)

int main(void) {
  pathwarden_model *m = NULL;
  pathwarden_process *backup = NULL, *alice = NULL;
  pathwarden_ruleset *rs = NULL;
  pathwarden_decision *d = NULL;
  struct pathwarden_request r;
  struct pathwarden_check c;
  struct pathwarden_layer l;
  struct pathwarden_cred backup_cred = {34, 34, NULL, 0, 0, 022};
  struct pathwarden_cred alice_cred = {1000, 1000, NULL, 0, 0, 022};
  int n;

  CHECK(pathwarden_model_new(&m, 0, 0) == 0);
  CHECK(pathwarden_model_new(&m, 0, 1) == -EINVAL);
  CHECK(pathwarden_model_mkdir(m, "/home", 0755, 0, 0, 0) == 0);
  CHECK(pathwarden_model_mkdir(m, "/home/alice", 0700, 1000, 1000, 0) == 0);
  CHECK(pathwarden_model_create(m, "/home/alice/key", PATHWARDEN_FILE_REGULAR, NULL, 0600, 1000,
                                1000, 0) == 0);
  CHECK(pathwarden_process_new(m, "backup", &backup_cred, &backup, 0) == 0);

  CHECK(pathwarden_request_init(&r, PATHWARDEN_OP_ACCESS) == 0);
  r.path = "/home/alice/key";
  r.mode = 4; /* R_OK */
  CHECK(pathwarden_ask(backup, &r, PATHWARDEN_DETAIL_TRACE, &d, 0) == 0);
  CHECK(pathwarden_decision_verdict(d) == PATHWARDEN_DENIED);
  CHECK(pathwarden_decision_errno(d) == EACCES);
  CHECK(strcmp(pathwarden_decision_stage(d), "walk") == 0);
  CHECK(strlen(pathwarden_decision_reason(d)) > 0);
  n = pathwarden_decision_component_count(d);
  CHECK(n >= 1);
  CHECK(pathwarden_decision_component(d, (size_t)(n - 1), &c, 0) == 0);
  CHECK(strcmp(c.path, "/home/alice") == 0 && !c.granted);
  CHECK(strstr(pathwarden_decision_json(d, 0), "\"EACCES\"") != NULL);
  printf("C: %s\n", pathwarden_decision_reason(d));
  pathwarden_decision_free(d);

  /* alice under a layer that lets her read nothing but /tmp. */
  CHECK(pathwarden_model_mkdir(m, "/tmp", 01777, 0, 0, 0) == 0);
  CHECK(pathwarden_process_new(m, "alice", &alice_cred, &alice, 0) == 0);
  CHECK(pathwarden_ruleset_new(&rs, 1u << 2 /* read_file */, 0, 0, 0) == 0);
  CHECK(pathwarden_ruleset_allow_path(rs, "/tmp", 1u << 2, 0) == 0);
  CHECK(pathwarden_process_restrict(alice, rs, 0) == 0);
  CHECK(pathwarden_ask_line(alice, "open /home/alice/key", &d, 0) == 0);
  CHECK(pathwarden_decision_errno(d) == EACCES);
  CHECK(strcmp(pathwarden_decision_stage(d), "landlock") == 0);
  CHECK(pathwarden_decision_layer_count(d) == 1);
  CHECK(pathwarden_decision_layer(d, 0, &l, 0) == 0);
  CHECK(strcmp(l.missing_names, "fs.read_file") == 0);
  printf("C: %s\n", pathwarden_decision_reason(d));
  pathwarden_decision_free(d);

  pathwarden_ruleset_free(rs);
  pathwarden_process_free(alice);
  pathwarden_process_free(backup);
  pathwarden_model_free(m);
  printf("C consumer: ok (libpathwarden %s)\n", pathwarden_version());
  return 0;
}
