#include "chat/jinja/parser.h"

#include "chat/jinja/parser_expr.h"

namespace exspec::jinja {
namespace {

class Parser : public detail::ExprParser {
 public:
  explicit Parser(const std::vector<Token>& t) : ExprParser(t) {}

  Body run() {
    Body b = body({});
    if (cur().kind != Token::End) fail("unexpected {% " + end_tag_ + " %}");
    check_calls(b);
    return b;
  }

 private:
  // Statements up to a block tag named in `ends` (left unread: end_tag_ names it).
  Body body(const std::set<std::string>& ends) {
    Body out;
    while (true) {
      const Token& tk = cur();
      if (tk.kind == Token::End) {
        if (!ends.empty()) fail("unclosed block: expected {% " + *ends.rbegin() + " %} before the end of the template");
        return out;
      }
      if (tk.kind == Token::Text) {
        out.push_back(std::make_shared<Stmt>(Stmt{Stmt::Text, tk.line, tk.text}));
        ++i_;
      } else if (tk.kind == Token::VarBegin) {
        ++i_;
        auto s = std::make_shared<Stmt>(Stmt{Stmt::Output, tk.line});
        s->expr = tuple_expr(true);
        if (cur().kind != Token::VarEnd) fail("expected '}}'" + near());
        ++i_;
        out.push_back(s);
      } else if (tk.kind == Token::BlockBegin) {
        if (peek().kind == Token::Name && ends.count(peek().text)) {
          end_tag_ = peek().text;
          ++i_;
          return out;
        }
        ++i_;
        out.push_back(statement());
      } else {
        fail("unexpected token");
      }
    }
  }

  // After the closing tag's name: consumes the rest of the tag.
  void close(const std::string& tag) {
    ++i_;  // the tag's name
    (void)tag;
    end_block();
  }

  StmtPtr statement() {
    const int line = cur().line;
    if (cur().kind != Token::Name) fail("expected a statement name after '{%'");
    const std::string kw = name();
    auto s = std::make_shared<Stmt>(Stmt{Stmt::Text, line});
    if (kw == "if") {
      s->kind = Stmt::If;
      ExprPtr cond = expr();
      end_block();
      while (true) {
        Body b = body({"elif", "else", "endif"});
        s->branches.emplace_back(cond, std::move(b));
        if (end_tag_ == "elif") {
          ++i_;
          cond = expr();
          end_block();
          continue;
        }
        if (end_tag_ == "else") {
          close("else");
          s->else_body = body({"endif"});
        }
        close("endif");
        return s;
      }
    }
    if (kw == "for") {
      s->kind = Stmt::For;
      s->targets = targets();
      if (!skip_name("in")) fail("expected 'in' in the for loop" + near());
      s->expr = tuple_expr(false);
      if (skip_name("if")) s->cond = expr(false);
      if (is_name("recursive")) fail("recursive for loops are not supported");
      end_block();
      ++loops_;
      s->body = body({"else", "endfor"});
      --loops_;
      if (end_tag_ == "else") {
        close("else");
        s->else_body = body({"endfor"});
      }
      close("endfor");
      return s;
    }
    if (kw == "set") {
      s->targets = targets();
      if (skip_op(".")) {
        if (s->targets.size() != 1) fail("expected '=' in set");
        s->is_attr = true;
        s->targets.push_back(name());
      }
      if (skip_op("=")) {
        s->kind = Stmt::Set;
        s->expr = tuple_expr(true);
        end_block();
        return s;
      }
      if (s->targets.size() != 1 || s->is_attr) fail("a block set takes one name");
      s->kind = Stmt::SetBlock;
      if (is_op("|")) s->expr = filter_chain(nullptr);
      end_block();
      s->body = body({"endset"});
      close("endset");
      return s;
    }
    if (kw == "macro") {
      s->kind = Stmt::Macro;
      s->text = name();
      defined_.insert(s->text);
      note_name(s->text, false);
      s->params = params();
      end_block();
      s->body = macro_body(*s, "endmacro");
      return s;
    }
    if (kw == "call") {
      s->kind = Stmt::CallBlock;
      if (is_op("(")) s->params = params();
      s->expr = expr();
      if (s->expr->kind != Expr::Call) fail("expected a macro call in {% call %}");
      end_block();
      s->body = macro_body(*s, "endcall");
      return s;
    }
    if (kw == "filter") {
      s->kind = Stmt::FilterBlock;
      s->expr = filter_chain(nullptr, /*leading_pipe=*/false);
      end_block();
      s->body = body({"endfilter"});
      close("endfilter");
      return s;
    }
    if (kw == "with") {
      s->kind = Stmt::With;
      while (cur().kind != Token::BlockEnd) {
        if (!s->targets.empty()) expect_op(",");
        s->targets.push_back(name());
        expect_op("=");
        s->values.push_back(expr());
      }
      end_block();
      s->body = body({"endwith"});
      close("endwith");
      return s;
    }
    if (kw == "break" || kw == "continue") {
      if (loops_ == 0) fail("{% " + kw + " %} outside a for loop");
      s->kind = kw == "break" ? Stmt::Break : Stmt::Continue;
      end_block();
      return s;
    }
    if (kw == "generation") {  // transformers' AssistantTracker: marks the assistant's text
      s->kind = Stmt::Scope;
      end_block();
      s->body = body({"endgeneration"});
      close("endgeneration");
      return s;
    }
    --i_;
    fail("unsupported construct {% " + kw + " %}");
  }

  // A macro's or call block's body, noting which of kwargs, varargs and caller it reads before
  // it sets them (a parameter of that name is no catch-all, as in Jinja2).
  Body macro_body(Stmt& s, const char* end) {
    macro_names_.emplace_back();
    Body b = body({end});
    close(end);
    const auto names = std::move(macro_names_.back());
    macro_names_.pop_back();
    auto reads = [&](const char* n) {
      auto it = names.find(n);
      bool param = false;
      for (const auto& p : s.params) param = param || p.name == n;
      return it != names.end() && it->second && !param;
    };
    s.catch_kwargs = reads("kwargs");
    s.catch_varargs = reads("varargs");
    s.catch_caller = reads("caller");
    return b;
  }

  std::string end_tag_;
};

}  // namespace

Body parse(const std::vector<Token>& tokens) { return Parser(tokens).run(); }

}  // namespace exspec::jinja
