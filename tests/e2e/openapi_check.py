"""Every response the end-to-end suite receives is checked against docs/openapi.json (the
document breachd serves at /openapi.json): its status is one the operation documents (or
its `default`), every header the response documents as required is there with a value of
its schema, the content type is a documented one, and a JSON body validates against the
schema (JSON Schema 2020-12, the dialect of OpenAPI 3.1). So the document cannot drift from
the server without a test failing. A path the document does not have must answer an error
in the documented error shape.

The schemas use only local references (#/components/...), resolved here by substitution,
so any jsonschema release with Draft 2020-12 will do (Debian 12's python3-jsonschema)."""
import gzip
import json
import os
import re

import jsonschema

DOC_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "docs", "openapi.json")
DEFAULT_BASE = "/v7"
DEFAULT_HIBP_BASE = "/api/v3"

with open(DOC_PATH, encoding="utf-8") as f:
    DOC = json.load(f)


def resolve(node):
    """node with every local $ref replaced by what it points at."""
    if isinstance(node, dict):
        if "$ref" in node and len(node) == 1:
            target = DOC
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            return resolve(target)
        return {k: resolve(v) for k, v in node.items()}
    if isinstance(node, list):
        return [resolve(v) for v in node]
    return node


# The statuses of libmicrohttpd's own pages: a request line that is not HTTP, a head past
# its memory pool, an HTTP version it does not speak.
LIBRARY_PAGES = (400, 413, 414, 431, 505)
def _full(template):
    """A path template with the URL of its server (the path's own, else the document's)."""
    servers = DOC["paths"][template].get("servers") or DOC["servers"]
    return servers[0]["url"].rstrip("/") + template


TEMPLATES = [(re.compile("^" + re.sub(r"\{[^/}]+\}", "[^/]+", _full(p)) + "$"), p)
             for p in DOC["paths"]]
_validators = {}


def _operation(method):
    """The document's operation for an HTTP method (HEAD is GET's)."""
    return "get" if method in ("GET", "HEAD") else method.lower()


def _validate(schema, value, what):
    key = json.dumps(schema, sort_keys=True)
    v = _validators.get(key)
    if v is None:
        v = _validators[key] = jsonschema.Draft202012Validator(schema)
    errors = sorted(v.iter_errors(value), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        raise AssertionError("openapi: %s does not match docs/openapi.json: %s at %s" % (
            what, e.message[:300], "/".join(str(p) for p in e.path) or "(root)"))


def _header_value(schema, text):
    """A header's text as the JSON value its schema types."""
    types = schema.get("type")
    if types == "integer" and re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return text


def check(method, target, status, headers, body, base=DEFAULT_BASE, hibp_base=DEFAULT_HIBP_BASE):
    """Asserts one response matches the document. target: the request path with its query;
    headers: lower-case names; base, hibp_base: the server's --base-path and
    --hibp-base-path."""
    if headers.get("content-encoding") == "gzip" and method != "HEAD":
        body = gzip.decompress(body)  # the document describes the representation
    if "x-request-id" not in headers and body.lstrip().startswith(b"<html>"):
        # libmicrohttpd's own fixed page for a request breachd never sees (docs/API.md,
        # "What reaches the API at all"): outside the document by nature
        if status not in LIBRARY_PAGES:
            raise AssertionError("openapi: %s -> %d: an HTML page of the library" % (target, status))
        return
    path = target.split("?", 1)[0]
    if path.startswith(base + "/range/"):
        path = path[len(base):]  # the ranges are served under the base path too
    if hibp_base != DEFAULT_HIBP_BASE and path.startswith(hibp_base + "/"):
        path = DEFAULT_HIBP_BASE + path[len(hibp_base):]
    elif base != DEFAULT_BASE and (path == base or path.startswith(base + "/")):
        path = DEFAULT_BASE + path[len(base):]
    what = "%s %s -> %d" % (method, path, status)
    template = next((p for rx, p in TEMPLATES if rx.match(path)), None)
    if method == "OPTIONS" and status in (204, 403):
        # a CORS preflight, answered alike on every path, documented ones or not
        item = DOC["paths"][template or next(iter(DOC["paths"]))]
        response = resolve(item["options"]["responses"][str(status)])
    elif template is None:
        response = resolve(DOC["components"]["responses"]["OtherError"])
    elif _operation(method) not in DOC["paths"][template]:
        # another method on a documented path: the key is checked before the method
        names = {401: "Unauthorized", 403: "AuthenticationFailed", 429: "RateLimited",
                 405: "MethodNotAllowed"}
        if status not in names:
            raise AssertionError("openapi: %s: the method is not documented" % what)
        response = resolve(DOC["components"]["responses"][names[status]])
    else:
        responses = resolve(DOC["paths"][template][_operation(method)]["responses"])
        response = responses.get(str(status)) or responses.get("default")
        if response is None:
            raise AssertionError("openapi: %s: status not documented" % what)
    for name, h in response.get("headers", {}).items():
        value = headers.get(name.lower())
        if value is None:
            if h.get("required"):
                raise AssertionError("openapi: %s: header %s missing" % (what, name))
            continue
        _validate(h["schema"], _header_value(h["schema"], value), "%s header %s" % (what, name))
    content = response.get("content", {})
    if method == "HEAD" or not content:
        return
    ctype = headers.get("content-type", "")
    if ctype not in content:
        raise AssertionError("openapi: %s: content type %r not documented (%s)" % (
            what, ctype, ", ".join(content)))
    if not ctype.startswith("application/json"):
        schema = content[ctype].get("schema", {})
        if "pattern" in schema and not re.fullmatch(schema["pattern"], body.decode("utf-8")):
            raise AssertionError("openapi: %s: the %s body does not match its pattern" % (
                what, ctype))
        return
    if ctype.startswith("application/json"):
        try:
            value = json.loads(body.decode("utf-8"))
        except ValueError:
            raise AssertionError("openapi: %s: body is not JSON" % what)
        _validate(content[ctype]["schema"], value, what + " body")
