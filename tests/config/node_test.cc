#include "trialshim/config/node.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trialshim::config {
namespace {

Node Sample() {
  Node root = Node::MakeMap();
  root.Set("a", Node::MakeMap({{"b", Node::Int(1)}}));
  root.Set("l", Node::MakeList({Node::String("x"),
                                Node::MakeMap({{"c", Node::Bool(true)}})}));
  return root;
}

TEST(NodeTest, FindFollowsDottedAndIndexedPaths) {
  Node root = Sample();
  struct Case {
    const char* path;
    bool found;
  } cases[] = {
      {"", true},       {"a", true},     {"a.b", true},   {"l.0", true},
      {"l[1].c", true}, {"l.1.c", true}, {"l.2", false},  {"a.nope", false},
      {"a.b.c", false}, {"l.x", false},  {"l.-1", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(root.Find(c.path) != nullptr, c.found)
        << "path '" << c.path << "'";
  }
  EXPECT_EQ(*root.Find("a.b"), Node::Int(1));
}

TEST(NodeTest, SetKeepsPositionAndEraseRemoves) {
  Node root = Sample();
  root.Set("a", Node::Int(5));
  EXPECT_EQ(root.Keys(), (std::vector<std::string>{"a", "l"}));
  EXPECT_TRUE(root.Erase("a"));
  EXPECT_FALSE(root.Erase("a"));
  EXPECT_EQ(root.Keys(), (std::vector<std::string>{"l"}));
}

TEST(NodeTest, EqualityIsTypeExact) {
  struct Case {
    Node a, b;
    bool equal;
    const char* name;
  } cases[] = {
      {Node::Int(1), Node::Double(1.0), false, "int vs float"},
      {Node::Int(1), Node::Bool(true), false, "int vs bool"},
      {Node::String("1"), Node::Int(1), false, "str vs int"},
      {Node::Double(std::nan("")), Node::Double(std::nan("")), true, "nan"},
      {Node(), Node::Null(), true, "null"},
      {Sample(), Sample(), true, "tree"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.a == c.b, c.equal) << c.name;
  }
}

TEST(NodeTest, InterpolationAndMissing) {
  struct Case {
    const char* text;
    bool interpolation;
    bool missing;
  } cases[] = {
      {"${a}", true, false},    {"x_${a.b}", true, false},
      {"\\${a}", false, false}, {"$a", false, false},
      {"???", false, true},     {"?? ?", false, false},
  };
  for (const Case& c : cases) {
    Node n = Node::String(c.text);
    EXPECT_EQ(n.IsInterpolation(), c.interpolation) << c.text;
    EXPECT_EQ(n.IsMissing(), c.missing) << c.text;
  }
  EXPECT_FALSE(Node::Int(1).IsInterpolation());
}

TEST(NodeTest, CountNodes) {
  EXPECT_EQ(Sample().CountNodes(), 7u);
  EXPECT_EQ(Node().CountNodes(), 1u);
}

}  // namespace
}  // namespace trialshim::config
