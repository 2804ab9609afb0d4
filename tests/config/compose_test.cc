// Composition on real config trees (tests/config/data/compose/features),
// case by case against what real Hydra 1.3.2 composed for the same tree and
// overrides (expectations recorded from Hydra with interpolations left
// unresolved; Hydra's own message is quoted above each error case). The
// Anchors* test composes every case with real Hydra again
// (tests/anchors/hydra_compose.py).
#include "trialshim/config/compose.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/testutil/anchors.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"
#include "trialshim/config/emit.h"

using ::testing::_;
using ::testing::HasSubstr;
using ::trialshim::testing::StatusIs;

namespace trialshim::config {
namespace {

const std::string kTree =
    std::string(TRIALSHIM_SOURCE_DIR) + "/tests/config/data/compose/features";

// JSON (as Python's json module wrote Hydra's result) to a Node, keeping
// int vs float and key order.
Node FromJson(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return Node::Null();
    case nlohmann::json::value_t::boolean:
      return Node::Bool(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return Node::Int(j.get<int64_t>());
    case nlohmann::json::value_t::number_float:
      return Node::Double(j.get<double>());
    case nlohmann::json::value_t::string:
      return Node::String(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      Node::List items;
      for (const auto& x : j) items.push_back(FromJson(x));
      return Node::MakeList(std::move(items));
    }
    default: {
      Node::Map entries;
      for (auto it = j.begin(); it != j.end(); ++it) {
        entries.emplace_back(it.key(), FromJson(it.value()));
      }
      return Node::MakeMap(std::move(entries));
    }
  }
}

// Sets environment variables for one case and restores them after.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& vars) {
    for (const auto& [k, v] : vars) {
      const char* old = std::getenv(k.c_str());
      saved_.emplace_back(k,
                          old ? std::optional<std::string>(old) : std::nullopt);
      setenv(k.c_str(), v.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : saved_) {
      if (v) {
        setenv(k.c_str(), v->c_str(), 1);
      } else {
        unsetenv(k.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

struct Case {
  const char* name;
  const char* config_name;
  std::vector<std::string> overrides;
  std::map<std::string, std::string> env;
  // Hydra's composed config as JSON, unresolved; nullptr for an error.
  const char* expect;
  // For an error: texts the message must contain.
  std::vector<std::string> error_has;
};

const Case
    kCases[] =
        {
            {"basic_defaults",
             "basic",
             {},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"group_override",
             "basic",
             {"db=postgres"},
             {},
             R"json({"db": {"host": "pg.local", "port": 5432, "schema": "public"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"group_override_last_wins",
             "basic",
             {"db=sqlite", "db=postgres"},
             {},
             R"json({"db": {"host": "pg.local", "port": 5432, "schema": "public"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"nested_group_path_override",
             "basic",
             {"server/cache=memcached"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "memcached", "ttl": 30}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"append_global_experiment_with_defaults_override",
             "basic",
             {"+experiment=fast"},
             {},
             R"json({"db": {"host": "pg.local", "port": 5432, "schema": "public"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 9090, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"append_then_value_override",
             "basic",
             {"+experiment=fast", "app.port=1"},
             {},
             R"json({"db": {"host": "pg.local", "port": 5432, "schema": "public"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 1, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"optional_choice_from_env",
             "basic",
             {},
             {{"TRIALSHIM_TEST_SITE", "eu"}},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "site": {"region": "eu-west"}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"optional_missing_option_overridden",
             "basic",
             {"extra=verbose"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"verbose": true, "name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"delete_group",
             "basic",
             {"~db"},
             {},
             R"json({"server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"delete_group_with_matching_choice",
             "basic",
             {"~db=mysql"},
             {},
             R"json({"server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"self_first_groups_win",
             "self_first",
             {},
             {},
             R"json({"db": {"host": "localhost", "extra": 1, "port": 3306, "user": "root"}})json",
             {}},
            {"self_missing_primary_wins",
             "no_self",
             {},
             {},
             R"json({"db": {"host": "from-primary", "port": 3306, "user": "root"}})json",
             {}},
            {"packaged_slots",
             "packages",
             {},
             {},
             R"json({"src": {"host": "localhost", "port": 3306, "user": "root"}, "dst": {"host": "pg.local", "port": 5432, "schema": "public"}, "copy": true})json",
             {}},
            {"packaged_slot_override",
             "packages",
             {"db@src=sqlite"},
             {},
             R"json({"src": {"file": "db.sqlite"}, "dst": {"host": "pg.local", "port": 5432, "schema": "public"}, "copy": true})json",
             {}},
            {"packaged_slot_append", "packages", {"+db@new=sqlite"}, {}, R"json({"src": {"host": "localhost", "port": 3306, "user": "root"}, "dst": {"host": "pg.local", "port": 5432, "schema": "public"}, "copy": true, "new": {"file": "db.sqlite"}})json", {}},
            {"nested_defaults",
             "nested",
             {},
             {},
             R"json({"model": {"encoder": {"dim": 64}, "layers": 2}, "_group_": {"file": "db.sqlite"}})json",
             {}},
            {"nested_relative_group_override",
             "nested",
             {"model/encoder=large"},
             {},
             R"json({"model": {"encoder": {"dim": 1024, "heads": 16}, "layers": 2}, "_group_": {"file": "db.sqlite"}})json",
             {}},
            {"nested_absolute_group_packaged_override",
             "nested",
             {"db@model.db=mysql"},
             {},
             R"json({"model": {"encoder": {"dim": 64}, "db": {"host": "localhost", "port": 3306, "user": "root"}, "layers": 2}})json",
             {}},
            {"options_list_merged_in_order",
             "options",
             {},
             {},
             R"json({"db": {"host": "pg.local", "port": 5432, "user": "root", "schema": "public"}})json",
             {}},
            {"options_list_replaced_by_name",
             "options",
             {"db=mysql"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}})json",
             {}},
            {"options_list_from_command_line",
             "basic",
             {"db=[postgres,mysql]"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "schema": "public", "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"null_placeholder",
             "placeholder",
             {},
             {},
             R"json({"name": "x"})json",
             {}},
            {"null_placeholder_filled",
             "placeholder",
             {"db=mysql"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "name": "x"})json",
             {}},
            {"interpolated_choice",
             "interp",
             {},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "query-cache"}}})json",
             {}},
            {"package_headers_and_global",
             "headers",
             {},
             {},
             R"json({"_group_": {"file": "db.sqlite"}, "foo": {"bar": {"x": 1}}, "host": "pg.local", "port": 5432, "schema": "public"})json",
             {}},
            {"mandatory_choice_given",
             "mandatory",
             {"db=postgres"},
             {},
             R"json({"db": {"host": "pg.local", "port": 5432, "schema": "public"}})json",
             {}},
            {"config_path_entries",
             "config_entry",
             {},
             {},
             R"json({"db": {"host": "pg.local", "port": 5432, "schema": "public"}, "cache": {"kind": "redis", "ttl": 60}})json",
             {}},
            {"config_name_with_extension",
             "basic.yaml",
             {},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"hydra_overrides_ignored",
             "basic",
             {"hydra.run.dir=/tmp/x", "hydra/launcher=basic", "+hydra.foo=1"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"hydra_node_and_groups_dropped",
             "hydra_entries",
             {},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "name": "h"})json",
             {}},
            {"primary_package_header",
             "primary_header",
             {},
             {},
             R"json({"top": {"db": {"host": "localhost", "port": 3306, "user": "root"}, "x": 1}})json",
             {}},
            {"value_last_wins",
             "basic",
             {"app.port=1", "app.port=2"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 2, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"add_new_key",
             "basic",
             {"+app.debug=true"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}", "debug": true}})json",
             {}},
            {"add_over_null",
             "basic",
             {"+app.nothing=5"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": 5, "ref": "${db.host}"}})json",
             {}},
            {"add_dict_merges_with_new_keys", "basic", {"+app.nested={w: 1, y: {new: 2}}"}, {}, R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2, "new": 2}, "w": 1}, "nothing": null, "ref": "${db.host}"}})json", {}},
            {"add_list_replaces",
             "basic",
             {"+app.tags=[c]"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["c"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"force_add_deep_and_existing",
             "basic",
             {"++app.new.deep=1", "++app.port=7"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 7, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}", "new": {"deep": 1}}})json",
             {}},
            {"dict_value_merges",
             "basic",
             {"app.nested={x: 5}"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 5, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"list_value_replaces",
             "basic",
             {"app.tags=[x,y,z]"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["x", "y", "z"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"scalar_replaces_dict",
             "basic",
             {"app.nested=5"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": 5, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"dict_replaces_scalar",
             "basic",
             {"app.port={a: 1}"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": {"a": 1}, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"list_item_by_index",
             "basic",
             {"app.tags.0=q"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["q", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"delete_key",
             "basic",
             {"~app.port"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"delete_key_with_matching_value",
             "basic",
             {"~app.port=8080.0"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"delete_dict",
             "basic",
             {"~app.nested"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"delete_interpolated_key_by_resolved_value",
             "basic",
             {"~app.ref=localhost"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null}})json",
             {}},
            {"interpolation_kept_unresolved",
             "basic",
             {"db.host=${app.name}"},
             {},
             R"json({"db": {"host": "${app.name}", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"override_value_types",
             "basic",
             {"app.port=1_000", "app.name=01", "app.nothing=1e-3",
              "app.ref='x,y'", "db.user=True"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": true}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "01", "port": 1000, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": 0.001, "ref": "x,y"}})json",
             {}},
            {"add_replaces_scalar_step_with_dict",
             "basic",
             {"+app.port.x=1"},
             {},
             R"json({"db": {"host": "localhost", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": {"x": 1}, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            {"dict_value_on_group_key_merges",
             "basic",
             {"db={host: h}"},
             {},
             R"json({"db": {"host": "h", "port": 3306, "user": "root"}, "server": {"cache": {"kind": "redis", "ttl": 60}}, "app": {"name": "demo", "port": 8080, "tags": ["a", "b"], "nested": {"x": 1, "y": {"z": 2}}, "nothing": null, "ref": "${db.host}"}})json",
             {}},
            // Hydra: In 'basic': Could not find 'db/oracle'
            {"unknown_option",
             "basic",
             {"db=oracle"},
             {},
             nullptr,
             {"Could not find 'db/oracle'",
              "Available options in 'db':\n\tmysql\n\tpostgres\n\tsqlite",
              "db=oracle"}},
            // Hydra: In 'basic': Could not find 'db/postgress'
            {"unknown_option_did_you_mean",
             "basic",
             {"db=postgress"},
             {},
             nullptr,
             {"Could not find 'db/postgress'", "did you mean 'postgres'?"}},
            // Hydra: Could not override 'dbb'. To append to your config use
            // +dbb=mysql (a new key): the group is meant.
            {"misspelt_group_with_its_option",
             "basic",
             {"dbb=mysql"},
             {},
             nullptr,
             {"Could not override 'dbb': no config group or key 'dbb'",
              "(did you mean the config group 'db': db=mysql?)"}},
            // Hydra: Could not override 'experiment'. No match in the defaults
            // list.
            {"group_not_in_defaults",
             "basic",
             {"experiment=fast"},
             {},
             nullptr,
             {"Could not override 'experiment'. No match in the defaults list.",
              "To append to your default list use +experiment=fast"}},
            // Hydra: Could not override 'db'.
            {"packaged_slots_only",
             "packages",
             {"db=sqlite"},
             {},
             nullptr,
             {"Could not override 'db'.",
              "Did you mean to override one of db@dst, db@src?", "+db=sqlite"}},
            // Hydra: Could not override 'db'.
            {"nested_slot_needs_package",
             "nested",
             {"db=mysql"},
             {},
             nullptr,
             {"Could not override 'db'.",
              "Did you mean to override db@model.db?"}},
            // Hydra: Multiple values for db. To override a value use 'override
            // db: postgres'
            {"append_existing_group",
             "basic",
             {"+db=postgres"},
             {},
             nullptr,
             {"Multiple values for db",
              "to change the choice instead use db=postgres"}},
            // Hydra: Multiple values for db@src. To override a value use
            // 'override db@src: sqlite'
            {"append_existing_packaged_slot",
             "packages",
             {"+db@src=sqlite"},
             {},
             nullptr,
             {"Multiple values for db@src"}},
            // Hydra: force-add of config groups is not supported:
            // '++db=postgres'
            {"force_add_group",
             "basic",
             {"++db=postgres"},
             {},
             nullptr,
             {"force-add of config groups is not supported: '++db=postgres'"}},
            // Hydra: Config group override must be a string or a list. Got
            // NoneType
            {"group_override_null",
             "basic",
             {"db=null"},
             {},
             nullptr,
             {"must be a string or a list", "~db"}},
            // Hydra: Config group override must be a string or a list. Got int
            {"group_override_int",
             "basic",
             {"db=1"},
             {},
             nullptr,
             {"must be a string or a list", "got int"}},
            // Hydra: Could not delete 'db=postgres'. No match in the defaults
            // list
            {"delete_group_wrong_choice",
             "basic",
             {"~db=postgres"},
             {},
             nullptr,
             {"Could not delete 'db=postgres'. No match in the defaults list"}},
            // Hydra: Could not delete 'experiment'. No match in the defaults
            // list
            {"delete_group_not_in_list",
             "basic",
             {"~experiment"},
             {},
             nullptr,
             {"Could not delete 'experiment'. No match in the defaults list"}},
            // Hydra: You must specify 'db', e.g, db=<OPTION>
            {"mandatory_choice_missing",
             "mandatory",
             {},
             {},
             nullptr,
             {"You must specify 'db'", "db=<OPTION>", "\tpostgres"}},
            // Hydra: Duplicate _self_ defined in dup_self
            {"duplicate_self",
             "dup_self",
             {},
             {},
             nullptr,
             {"Duplicate _self_ defined in dup_self"}},
            // Hydra: In bad_order: Override 'db : postgres' is defined before
            // 'server/cache: redis'.
            {"override_before_plain_entry",
             "bad_order",
             {},
             {},
             nullptr,
             {"Override 'db : postgres' is defined before 'server/cache: "
              "redis'",
              "Overrides must be at the end of the defaults list"}},
            // Hydra: Invalid defaults list in 'not_list', defaults must be a
            // list (got mapping)
            {"defaults_not_a_list",
             "not_list",
             {},
             {},
             nullptr,
             {"Invalid defaults list in 'not_list', defaults must be a list "
              "(got mapping)"}},
            // Hydra: Unsupported item value in defaults : int. Supported:
            // string or list
            {"defaults_item_not_a_name",
             "bad_item",
             {},
             {},
             nullptr,
             {"bad_item", "int", "Supported: string or list"}},
            // Hydra: Cannot find primary config 'nope'. Check that it's in your
            // config search path.
            {"primary_missing",
             "nope",
             {},
             {},
             nullptr,
             {"Cannot find primary config 'nope'"}},
            // Hydra: Cannot find primary config 'basics'. Check that it's in
            // your config search path.
            {"primary_did_you_mean",
             "basics",
             {},
             {},
             nullptr,
             {"Cannot find primary config 'basics'", "did you mean 'basic'?"}},
            // Hydra: In 'interp': Could not find 'server/cache/postgres_cache'
            {"interpolated_choice_missing",
             "interp",
             {"db=postgres"},
             {},
             nullptr,
             {"Could not find 'server/cache/postgres_cache'", "\tmysql_cache"}},
            // Hydra: In 'typo_group': Could not find 'dbb/mysql'
            {"unknown_group_in_defaults",
             "typo_group",
             {},
             {},
             nullptr,
             {"In 'typo_group': Could not find 'dbb/mysql'",
              "did you mean 'db'?"}},
            // Hydra: In 'experiment/bad_override': Could not override
            // 'missing_group'. No match in the defaults list.
            {"unused_override_in_config",
             "basic",
             {"+experiment=bad_override"},
             {},
             nullptr,
             {"In 'experiment/bad_override': Could not override "
              "'missing_group'. No match in the defaults list."}},
            // Hydra: while parsing a flow sequence
            {"yaml_error_in_group_file",
             "basic",
             {"+broken=bad"},
             {},
             nullptr,
             {"broken/bad.yaml"}},
            // Hydra: Could not override 'app.prot'.
            {"unknown_key",
             "basic",
             {"app.prot=1"},
             {},
             nullptr,
             {"Could not override 'app.prot'", "did you mean 'app.port'?",
              "To append to your config use +app.prot=1"}},
            // Hydra: Could not override 'dbb.host'.
            {"unknown_key_typo_of_group",
             "basic",
             {"dbb.host=x"},
             {},
             nullptr,
             {"Could not override 'dbb.host'", "did you mean 'db'?"}},
            // Hydra: Could not override 'app.new.deep'.
            {"unknown_nested_key",
             "basic",
             {"app.new.deep=1"},
             {},
             nullptr,
             {"Could not override 'app.new.deep'", "'app.new'",
              "+app.new.deep=1"}},
            // Hydra: Could not override 'app.nested'.
            {"dict_merge_new_key",
             "basic",
             {"app.nested={q: 5}"},
             {},
             nullptr,
             {"Could not override 'app.nested'", "app.nested.q",
              "+app.nested={q: 5}"}},
            // Hydra: Could not append to config. An item is already at
            // 'app.port'.
            {"add_existing_key",
             "basic",
             {"+app.port=1"},
             {},
             nullptr,
             {"Could not append to config. An item is already at 'app.port'.",
              "Either remove + prefix: 'app.port=1'", "'++app.port=1'"}},
            // Hydra: Could not delete from config. 'app.nope' does not exist.
            {"delete_missing_key",
             "basic",
             {"~app.nope"},
             {},
             nullptr,
             {"Could not delete from config. 'app.nope' does not exist",
              "did you mean 'app.name'?"}},
            // Hydra: Could not delete from config. 'app.nothing' does not
            // exist.
            {"delete_null_key",
             "basic",
             {"~app.nothing"},
             {},
             nullptr,
             {"Could not delete from config. 'app.nothing' does not exist"}},
            // Hydra: Could not delete from config. The value of 'app.port' is
            // 8080 and not 8081.
            {"delete_wrong_value",
             "basic",
             {"~app.port=8081"},
             {},
             nullptr,
             {"The value of 'app.port' is 8080 and not 8081."}},
            // Hydra: Could not delete from config. The value of 'app.nested.y'
            // is {'z': 2} and not 5.
            {"delete_wrong_dict_value",
             "basic",
             {"~app.nested.y=5"},
             {},
             nullptr,
             {"The value of 'app.nested.y' is {'z': 2} and not 5."}},
            // Hydra: list indices must be integers or slices, not str
            {"delete_list_item",
             "basic",
             {"~app.tags.0"},
             {},
             nullptr,
             {"~app.tags.0"}},
            // Hydra: Override app.port@x=1 looks like a config group override,
            // but config group 'app.port' does not exist.
            {"package_on_plain_key",
             "basic",
             {"app.port@x=1"},
             {},
             nullptr,
             {"Override app.port@x=1 looks like a config group override, but "
              "config group 'app.port' does not exist."}},
            // Hydra: Error merging override app.tags.5=q
            {"list_index_out_of_range",
             "basic",
             {"app.tags.5=q"},
             {},
             nullptr,
             {"Error merging override app.tags.5=q", "out of range"}},
            // Hydra: Error merging override app.tags={a: 1}
            {"dict_into_list",
             "basic",
             {"app.tags={a: 1}"},
             {},
             nullptr,
             {"Error merging override app.tags={a: 1}"}},
            // Hydra: Error merging override app.nested=[1]
            {"list_into_dict",
             "basic",
             {"app.nested=[1]"},
             {},
             nullptr,
             {"Error merging override app.nested=[1]"}},
            // Hydra: Ambiguous value for argument 'app.port=1,2'
            {"simple_sweep",
             "basic",
             {"app.port=1,2"},
             {},
             nullptr,
             {"Ambiguous value for argument 'app.port=1,2'", "app.port=[1,2]",
              "app.port='1,2'", "--multirun"}},
            // Hydra: Sweep parameters 'app.port=choice(1,2)' requires
            // --multirun
            {"choice_sweep",
             "basic",
             {"app.port=choice(1,2)"},
             {},
             nullptr,
             {"Sweep parameters 'app.port=choice(1,2)' requires --multirun"}},
            // Hydra: Ambiguous value for argument 'db=mysql,postgres'
            {"group_sweep",
             "basic",
             {"db=mysql,postgres"},
             {},
             nullptr,
             {"Ambiguous value for argument 'db=mysql,postgres'"}},
            // Hydra: Could not override 'app.port.x'.
            {"scalar_step_in_struct_mode",
             "basic",
             {"app.port.x=1"},
             {},
             nullptr,
             {"Could not override 'app.port.x'", "+app.port.x=1"}},
            // Hydra: Could not override 'app.nothing.x'.
            {"null_step_in_struct_mode",
             "basic",
             {"app.nothing.x=1"},
             {},
             nullptr,
             {"Could not override 'app.nothing.x'"}},
            // Hydra: LexerNoViableAltException: app.name=it's
            {"override_parse_error",
             "basic",
             {"app.name=it's"},
             {},
             nullptr,
             {"app.name=it's"}},
            // Hydra: Could not override 'dbx/y'.
            {"missing_group_path_key",
             "basic",
             {"dbx/y=1"},
             {},
             nullptr,
             {"dbx/y"}},
};

TEST(ComposeTest, MatchesHydraOnFeatureTree) {
  for (const Case& c : kCases) {
    ScopedEnv env(c.env);
    ComposeRequest request;
    request.config_path = kTree;
    request.config_name = c.config_name;
    request.overrides = c.overrides;
    StatusOr<ComposeResult> got = Compose(request);
    if (c.expect == nullptr) {
      ASSERT_FALSE(got.ok())
          << "case " << c.name << ": composed " << ToJson(got->config, -1);
      EXPECT_TRUE(got.status().code() == StatusCode::kInvalidArgument ||
                  got.status().code() == StatusCode::kNotFound)
          << "case " << c.name << ": " << got.status().message();
      for (const std::string& part : c.error_has) {
        EXPECT_THAT(got, StatusIs(_, HasSubstr(part))) << "case " << c.name;
      }
      continue;
    }
    ASSERT_OK(got) << " (case " << c.name << ")";
    Node want = FromJson(nlohmann::ordered_json::parse(c.expect));
    EXPECT_EQ(got->config, want)
        << "case " << c.name << "\n got:  " << ToJson(got->config, -1)
        << "\n want: " << ToJson(want, -1);
  }
}

// Real Hydra's compose API on every case: it must compose what the case
// records (or refuse), and Compose what Hydra composes now.
TEST(AnchorsComposeTest, RealHydraComposesTheFeatureTreeCases) {
  SKIP_WITHOUT_ANCHORS();
  nlohmann::json requests = nlohmann::json::array();
  for (const Case& c : kCases) {
    requests.push_back({{"config_dir", kTree},
                        {"config_name", c.config_name},
                        {"overrides", c.overrides},
                        {"env", c.env}});
  }
  testing::TempDir dir;
  testing::Finished f =
      testing::RunAnchorsScript("tests/anchors/hydra_compose.py",
                                {dir.Write("requests.json", requests.dump())});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  auto live = nlohmann::ordered_json::parse(f.out, nullptr, false);
  ASSERT_EQ(live.size(), std::size(kCases)) << f.out;
  for (size_t i = 0; i < live.size(); ++i) {
    const Case& c = kCases[i];
    if (!live[i].contains("config")) {
      EXPECT_EQ(c.expect, nullptr)
          << "case " << c.name
          << ": Hydra refuses it now: " << live[i]["error"];
      continue;
    }
    ASSERT_NE(c.expect, nullptr)
        << "case " << c.name << ": Hydra composes it now: " << live[i];
    Node hydra = FromJson(live[i]["config"]);
    EXPECT_EQ(FromJson(nlohmann::ordered_json::parse(c.expect)), hydra)
        << "case " << c.name << ": the recorded config is not Hydra's now: "
        << live[i]["config"].dump();
    ScopedEnv env(c.env);
    ComposeRequest request;
    request.config_path = kTree;
    request.config_name = c.config_name;
    request.overrides = c.overrides;
    StatusOr<ComposeResult> got = Compose(request);
    ASSERT_OK(got) << " (case " << c.name << ")";
    EXPECT_EQ(got->config, hydra) << "case " << c.name;
  }
}

// Hydra's hydra.runtime.choices, in the order Hydra made the choices (each
// defaults list last entry first); expectations printed by Hydra 1.3.2's
// `--cfg hydra` on these trees. Hydra's own groups follow the app's.
using Choices = std::vector<std::pair<std::string, std::optional<std::string>>>;

struct ChoiceCase {
  const char* name;
  const char* config_name;
  std::vector<std::string> overrides;
  Choices want;  // the app's; Hydra's own groups follow
};

const std::vector<ChoiceCase>& ChoiceCases() {
  static const auto* cases = new std::vector<ChoiceCase>{
      {"plain",
       "basic",
       {},
       {{"extra", "none"},
        {"server/cache", "redis"},
        {"db", "mysql"},
        {"site", "none"}}},
      {"overridden and appended",
       "basic",
       {"db=sqlite", "+experiment=slow"},
       {{"experiment", "slow"},
        {"extra", "none"},
        {"server/cache", "redis"},
        {"db", "sqlite"},
        {"site", "none"}}},
      {"deleted group absent",
       "basic",
       {"~db"},
       {{"extra", "none"}, {"server/cache", "redis"}, {"site", "none"}}},
      {"packaged slots",
       "packages",
       {},
       {{"db@dst", "postgres"}, {"db@src", "mysql"}}},
      {"nested",
       "nested",
       {},
       {{"model", "transformer"},
        {"db@model.db", "sqlite"},
        {"model/encoder", "small"}}},
      {"null placeholder", "placeholder", {}, {{"db", std::nullopt}}},
      {"interpolated",
       "interp",
       {},
       {{"db", "mysql"}, {"server/cache", "mysql_cache"}}},
  };
  return *cases;
}

Choices WithHydrasGroups(Choices app) {
  const Choices hydra_groups = {
      {"hydra/env", "default"},       {"hydra/callbacks", std::nullopt},
      {"hydra/job_logging", "default"}, {"hydra/hydra_logging", "default"},
      {"hydra/hydra_help", "default"}, {"hydra/help", "default"},
      {"hydra/sweeper", "basic"},      {"hydra/launcher", "basic"},
      {"hydra/output", "default"}};
  app.insert(app.end(), hydra_groups.begin(), hydra_groups.end());
  return app;
}

TEST(ComposeTest, ReportsChoicesInTheOrderHydraMadeThem) {
  for (const ChoiceCase& c : ChoiceCases()) {
    ComposeRequest request;
    request.config_path = kTree;
    request.config_name = c.config_name;
    request.overrides = c.overrides;
    StatusOr<ComposeResult> got = Compose(request);
    ASSERT_OK(got) << " (case " << c.name << ")";
    EXPECT_EQ(got->choices, WithHydrasGroups(c.want)) << "case " << c.name;
  }
}

// The same through Hydra's compose API: hydra.runtime.choices, in order.
TEST(AnchorsComposeTest, HydraMakesTheChoicesInThatOrder) {
  SKIP_WITHOUT_ANCHORS();
  nlohmann::json requests = nlohmann::json::array();
  for (const ChoiceCase& c : ChoiceCases()) {
    requests.push_back({{"config_dir", kTree},
                        {"config_name", c.config_name},
                        {"overrides", c.overrides},
                        {"choices", true}});
  }
  testing::TempDir dir;
  testing::Finished f =
      testing::RunAnchorsScript("tests/anchors/hydra_compose.py",
                                {dir.Write("requests.json", requests.dump())});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  nlohmann::json live = nlohmann::json::parse(f.out, nullptr, false);
  ASSERT_EQ(live.size(), ChoiceCases().size()) << f.out;
  for (size_t i = 0; i < live.size(); ++i) {
    const ChoiceCase& c = ChoiceCases()[i];
    ASSERT_TRUE(live[i].contains("choices")) << c.name << ": " << live[i];
    nlohmann::json want = nlohmann::json::array();
    for (const auto& [group, option] : WithHydrasGroups(c.want)) {
      want.push_back({group, option ? nlohmann::json(*option) : nullptr});
    }
    EXPECT_EQ(live[i]["choices"], want) << "case " << c.name;
  }
}

TEST(ComposeTest, KeepsParsedOverridesInOrder) {
  ComposeRequest request;
  request.config_path = kTree;
  request.config_name = "basic";
  request.overrides = {"db=postgres", "+app.debug=true", "~app.port"};
  StatusOr<ComposeResult> got = Compose(request);
  ASSERT_OK(got);
  ASSERT_EQ(got->overrides.size(), 3u);
  EXPECT_EQ(got->overrides[0].key_or_group, "db");
  EXPECT_EQ(got->overrides[1].type, OverrideType::kAdd);
  EXPECT_EQ(got->overrides[2].type, OverrideType::kDelete);
  EXPECT_EQ(got->overrides[2].input, "~app.port");
}

// A multirun's own config (Hydra's RunMode.MULTIRUN): the sweeps are left
// out of the config and kept in hydra.overrides.task for the sweeper; a
// sweep of Hydra's node is refused; "~key=null" deletes as "~key" does.
TEST(ComposeTest, MultirunModeLeavesTheSweepsToTheSweeper) {
  ComposeRequest request;
  request.config_path = kTree;
  request.config_name = "basic";
  request.mode = ComposeMode::kMultirun;
  request.overrides = {"db=postgres,sqlite", "app.port=1,2", "app.name=x",
                       "~app.tags=null"};
  StatusOr<ComposeResult> got = Compose(request);
  ASSERT_OK(got);
  EXPECT_EQ(got->config.Find("app.port")->AsInt(), 8080);
  EXPECT_EQ(got->config.Find("app.name")->AsString(), "x");
  EXPECT_EQ(got->config.Find("app.tags"), nullptr);
  EXPECT_EQ(got->config.Find("db.host")->AsString(), "localhost");  // mysql
  EXPECT_EQ(got->hydra.Find("overrides.task")->size(), 4u);
  request.overrides = {"hydra.job.chdir=true,false"};
  got = Compose(request);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "Sweeping over Hydra's configuration is not supported : "
            "'hydra.job.chdir=true,false'");
  request.mode = ComposeMode::kRun;
  request.overrides = {"app.port=1,2"};
  got = Compose(request);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got, StatusIs(_, HasSubstr("use 'app.port=[1,2]'")));
}

// An override's text is kept in hydra.overrides.task, where OmegaConf
// parses it (tests/data/hydra_app: override_text_*): the error names the
// override and its place there, and the spelling it suggests composes.
TEST(ComposeTest, OverrideTextsAreValidStringsWithAHintThatWorks) {
  ComposeRequest request;
  request.config_path = kTree;
  request.config_name = "basic";
  request.overrides = {"app.port=1", "app.name='${foo:\\'b,a,r\\'}'"};
  StatusOr<ComposeResult> got = Compose(request);
  ASSERT_FALSE(got.ok());
  const std::string& message = got.status().message();
  EXPECT_NE(message.find("full_key: hydra.overrides.task[1]"),
            std::string::npos)
      << message;
  const std::string hint = "Write the value in double quotes instead: ";
  size_t at = message.find(hint);
  ASSERT_NE(at, std::string::npos) << message;
  // The hint is quoted for a POSIX shell: ask one for the word it means.
  std::string quoted = message.substr(at + hint.size());
  std::string cmd = "printf %s " + quoted;
  FILE* sh = popen(cmd.c_str(), "r");
  ASSERT_NE(sh, nullptr);
  char buf[256] = {};
  std::string word(buf, fread(buf, 1, sizeof buf - 1, sh));
  pclose(sh);
  EXPECT_EQ(word, "app.name=\"${foo:'b,a,r'}\"");
  request.overrides = {"app.port=1", word};
  got = Compose(request);
  ASSERT_OK(got);
  EXPECT_EQ(got->config.Find("app.name")->AsString(), "${foo:'b,a,r'}");
}

TEST(ComposeTest, MissingConfigDirectoryIsNotFound) {
  ComposeRequest request;
  request.config_path = kTree + "/no-such-dir";
  request.config_name = "config";
  StatusOr<ComposeResult> got = Compose(request);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got, StatusIs(StatusCode::kNotFound, HasSubstr("no-such-dir")));
}

TEST(ComposeTest, LimitsApplyToEveryFile) {
  ComposeRequest request;
  request.config_path = kTree;
  request.config_name = "basic";
  request.limits.max_file_bytes = 16;  // basic.yaml is larger
  StatusOr<ComposeResult> got = Compose(request);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got, StatusIs(_, HasSubstr("basic.yaml")));
}

// A choice or config name is a name inside the config directory: '..'
// segments, absolute paths and backslashes could reach any YAML file on the
// machine, so they are refused (Hydra refuses '..' and '\\' too).
TEST(ComposeTest, RefusesNamesOutsideTheConfigDirectory) {
  testing::TempDir dir;
  dir.Write("outside.yaml", "secret: leaked\n");
  dir.Write("conf/config.yaml",
            "defaults:\n  - db: mysql\n  - _self_\nlr: 0.1\n");
  dir.Write("conf/db/mysql.yaml", "host: h\n");
  dir.Write("conf/db/cloud/aws.yaml", "host: aws\n");
  dir.Write("conf/model/encoder/x.yaml", "enc: x\n");
  dir.Write("conf/trav.yaml", "defaults:\n  - db: ../../outside\n");
  dir.Write("conf/trav_path.yaml", "defaults:\n  - ../outside\n");
  dir.Write("conf/trav_list.yaml",
            "defaults:\n  - db: [mysql, ../../outside]\n");
  dir.Write("conf/nested.yaml", "defaults:\n  - db: cloud/aws\n");
  struct Case {
    std::string name;
    std::string config_name;
    std::vector<std::string> overrides;
    std::vector<std::string> want;  // empty: composes
  };
  const std::vector<Case> cases = {
      {"command line ../..",
       "config",
       {"db=../../outside"},
       {"Override 'db=../../outside'", "option '../../outside'",
        "config group 'db'", "'..' path segment",
        "options are names of configs inside the group directory 'db/'"}},
      {"package override ../..",
       "config",
       {"+db@x=../../outside"},
       {"Override '+db@x=../../outside'", "option '../../outside'"}},
      {"absolute option",
       "config",
       {"db=/etc/passwd"},
       {"option '/etc/passwd'", "an absolute path"}},
      {"backslash option",
       "config",
       {"db=..\\..\\outside"},
       {"option '..\\..\\outside'", "a backslash"}},
      {"defaults list ../..",
       "trav",
       {},
       {"In 'trav.yaml'", "option '../../outside'", "'..' path segment"}},
      {"defaults list config path",
       "trav_path",
       {},
       {"In 'trav_path.yaml'", "config '../outside'"}},
      {"options list item",
       "trav_list",
       {},
       {"In 'trav_list.yaml'", "'db/../../outside'"}},
      {"config name ../",
       "../outside",
       {},
       {"Invalid config name '../outside'"}},
      {"absolute config name",
       dir.Join("outside"),
       {},
       {"Invalid config name", "an absolute path"}},
      {"nested group option", "nested", {}, {}},
      {"option in a subdirectory", "config", {"db=cloud/aws"}, {}},
      {"nested group override", "config", {"+model/encoder=x"}, {}},
  };
  for (const Case& c : cases) {
    ComposeRequest request;
    request.config_path = dir.Join("conf");
    request.config_name = c.config_name;
    request.overrides = c.overrides;
    StatusOr<ComposeResult> got = Compose(request);
    if (c.want.empty()) {
      EXPECT_TRUE(got.ok())
          << "case " << c.name << ": " << got.status().message();
      continue;
    }
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument)
        << "case " << c.name << ": " << got.status().message();
    for (const std::string& want : c.want) {
      EXPECT_THAT(got, StatusIs(_, HasSubstr(want))) << "case " << c.name;
    }
  }
}

// Hydra names the wrong type in a defaults list as Python's type(x).__name__
// of what OmegaConf hands it (hydra/_internal/config_repository.py): a
// nested list item is a ListConfig, a value and a list item of a mapping
// are dicts, and only a defaults list that is a mapping is "mapping".
TEST(ComposeTest, DefaultsListTypeErrorsNameTheTypeAsHydra) {
  testing::TempDir dir;
  dir.Write("conf/list_item.yaml", "defaults:\n  - [a]\n");
  dir.Write("conf/map_value.yaml", "defaults:\n  - db: {x: 1}\n");
  dir.Write("conf/map_option.yaml", "defaults:\n  - db: [{x: 1}]\n");
  dir.Write("conf/map_list.yaml", "defaults: {db: x}\n");
  struct Case {
    std::string config_name;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"list_item", "unsupported type in defaults: ListConfig"},
      {"map_value", "unsupported item value in defaults 'db': dict."},
      {"map_option", "unsupported item value in defaults 'db': dict, nested"},
      {"map_list", "defaults must be a list (got mapping)"},
  };
  for (const Case& c : cases) {
    ComposeRequest request;
    request.config_path = dir.Join("conf");
    request.config_name = c.config_name;
    EXPECT_THAT(Compose(request),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.config_name;
  }
}

// A defaults list that reaches its own config again would expand forever.
TEST(ComposeTest, RefusesConfigsInTheirOwnDefaultsList) {
  testing::TempDir dir;
  dir.Write("conf/self.yaml", "defaults:\n  - self\n");
  dir.Write("conf/cyc.yaml", "defaults:\n  - db: loop\n");
  dir.Write("conf/db/loop.yaml", "defaults:\n  - /db: loop\nx: 1\n");
  dir.Write("conf/a.yaml", "defaults:\n  - b\n");
  dir.Write("conf/b.yaml", "defaults:\n  - a\n");
  dir.Write("conf/twice.yaml", "defaults:\n  - leaf@x\n  - leaf@y\n");
  dir.Write("conf/leaf.yaml", "v: 1\n");
  struct Case {
    std::string name;
    std::string config_name;
    std::string want;  // "": composes
  };
  const std::vector<Case> cases = {
      {"itself", "self",
       "In 'self.yaml': the defaults list includes 'self' "
       "inside itself: self -> self"},
      {"group option", "cyc",
       "In 'db/loop.yaml': the defaults list includes "
       "'db/loop' inside itself: db/loop -> db/loop"},
      {"through another", "a", "In 'b.yaml'"},
      {"same config twice, not nested", "twice", ""},
  };
  for (const Case& c : cases) {
    ComposeRequest request;
    request.config_path = dir.Join("conf");
    request.config_name = c.config_name;
    StatusOr<ComposeResult> got = Compose(request);
    if (c.want.empty()) {
      EXPECT_TRUE(got.ok())
          << "case " << c.name << ": " << got.status().message();
      continue;
    }
    ASSERT_FALSE(got.ok()) << "case " << c.name;
    EXPECT_THAT(got, StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want)))
        << "case " << c.name;
  }
}

}  // namespace
}  // namespace trialshim::config
