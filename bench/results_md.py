"""bench/RESULTS.md: a section between <!-- bench:TAG:begin --> and <!-- bench:TAG:end -->
replaced in place, or appended when the file has none yet."""
import re


def replace_section(path, tag, text):
    """text: the whole section, its begin and end markers included, ending in a newline."""
    with open(path) as f:
        doc = f.read()
    m = re.search(r"<!-- bench:%s:begin -->.*?<!-- bench:%s:end -->\n" % (re.escape(tag), re.escape(tag)),
                  doc, re.S)
    doc = doc[:m.start()] + text + doc[m.end():] if m else doc.rstrip("\n") + "\n\n" + text
    with open(path, "w") as f:
        f.write(doc)
