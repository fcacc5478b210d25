#!/usr/bin/env python3
"""Synthetic breachd corpus for the benchmark: breaches, breach records and cards as JSON
Lines in the import formats of docs/OPERATIONS.md, plus the sample lists the wrk scripts
rotate through.

    gen_corpus.py --records 1000000 --cards 1000000 --out DIR [--seed 7] [--breaches 200]

writes DIR/breaches.jsonl, DIR/records.jsonl, DIR/cards.jsonl and, for the load scenarios,
DIR/emails.txt (emails that exist), DIR/domains.txt (email domains with at least two pages
of 100 records), DIR/bins.txt (the shared BINs), DIR/owners.txt (owner words) and
DIR/manifest.json (sizes, seed, distributions). The same arguments give the same bytes.

Distributions, chosen to look like real dumps rather than uniform noise:
- email domains are Zipf-like: a few huge ones (bigcorp.example alone holds ~12% of the
  records) and a long tail of small ones;
- an identity (one email) appears in 1 to 5 breaches (mean ~2.2), often reusing its
  password; breach sizes are skewed too;
- optional fields appear at realistic rates (password ~45%, hash ~35%, IP ~50%, phone ~25%,
  SSN ~5%, bitcoin ~1%);
- cards sit mostly on a dozen shared BINs (411111 alone ~18%), 15, 16 or 19 digits, owners
  from name lists (some with accents), 300 leaks of skewed size, createdAt 2019-2025,
  expireDate 2024-2031 in the three accepted forms.
Everything is fake by construction: .example domains, documentation IP ranges (RFC 5737,
RFC 3849), 555-01xx phone numbers, 9xx SSN areas (never issued), test-card BINs.

Standard library only; about 20 s per million lines on one core."""
import argparse
import bisect
import itertools
import json
import os
import sys

import random

FIRST = ("james mary john patricia robert jennifer michael linda william elizabeth david "
         "barbara richard susan joseph jessica thomas sarah charles karen christopher lisa "
         "daniel nancy matthew betty anthony margaret mark sandra donald ashley steven "
         "kimberly paul emily andrew donna joshua michelle kenneth carol kevin amanda brian "
         "dorothy george melissa timothy deborah ronald stephanie edward rebecca jason sharon "
         "jeffrey laura ryan cynthia jacob kathleen gary amy nicholas angela eric shirley "
         "jonathan anna stephen brenda larry pamela justin emma scott nicole brandon helen "
         "benjamin samantha samuel katherine gregory christine alexander debra frank rachel "
         "patrick carolyn raymond janet jack catherine dennis maria jerry heather tyler diane "
         "aaron ruth jose julie adam olivia nathan joyce henry virginia douglas victoria "
         "zachary kelly peter lauren kyle christina ethan joan walter evelyn noah judith "
         "jeremy megan christian andrea keith cheryl roger hannah terry jacqueline gerald "
         "martha harold gloria sean teresa austin ann carl sara arthur madison lawrence "
         "frances dylan kathryn jesse janice jordan jean bryan abigail billy alice joe julia "
         "bruce judy gabriel sophia logan grace albert denise willie amber alan doris juan "
         "marilyn wayne danielle elijah beverly randy isabella roy theresa vincent diana "
         "ralph natalie eugene brittany russell charlotte bobby marie mason kayla philip "
         "alexis louis lori").split()
LAST = ("smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez "
        "lopez gonzalez wilson anderson thomas taylor moore jackson martin lee perez thompson "
        "white harris sanchez clark ramirez lewis robinson walker young allen king wright "
        "scott torres nguyen hill flores green adams nelson baker hall rivera campbell "
        "mitchell carter roberts gomez phillips evans turner diaz parker cruz edwards collins "
        "reyes stewart morris morales murphy cook rogers gutierrez ortiz morgan cooper "
        "peterson bailey reed kelly howard ramos kim cox ward richardson watson brooks chavez "
        "wood james bennett gray mendoza ruiz hughes price alvarez castillo sanders patel "
        "myers long ross foster jimenez powell jenkins perry russell sullivan bell coleman "
        "butler henderson barnes gonzales fisher vasquez simmons romero jordan patterson "
        "alexander hamilton graham reynolds griffin wallace moreno west cole hayes bryant "
        "herrera gibson ellis tran medina aguilar stevens murray ford castro marshall owens "
        "harrison fernandez mcdonald woods washington kennedy wells vargas henry chen freeman "
        "webb tucker guzman burns crawford olson simpson porter hunter gordon mendez silva "
        "shaw snyder mason dixon munoz hunt hicks holmes palmer wagner black robertson boyd "
        "rose stone salazar fox warren mills meyer rice schmidt garza daniels ferguson nichols "
        "stephens soto weaver ryan gardner payne grant dunn kelley spencer hawkins arnold "
        "pierce vazquez hansen peters santos hart bradley knight elliott cunningham duncan "
        "armstrong hudson carroll lane riley andrews alvarado ray delgado berry perkins "
        "hoffman johnston matthews pena richards contreras willis carpenter lawrence sandoval "
        "guerrero george chapman rios estrada ortega watkins greene nunez wheeler valdez "
        "harper burke larson santiago maldonado morrison franklin carlson austin dominguez "
        "carr lawson jacobs obrien lynch singh vega bishop montgomery oliver jensen harvey "
        "williamson gilbert dean sims espinoza howell li wong reid hanson le mccoy garrett "
        "burton fuller wang weber welch rojas lucas marquez fields park yang little banks "
        "padilla day walsh bowman schultz luna fowler mejia davidson acosta brewer may holland "
        "juarez newman pearson curtis cortez douglas schneider joseph barrett navarro figueroa "
        "keller avila wade molina stanley hopkins campos barnett bates chambers caldwell beck "
        "lambert miranda byrd craig ayala lowe frazier powers neal leonard gregory carrillo "
        "sutton fleming rhodes shelton schwartz norris jennings watts duran walters cohen "
        "mcdaniel moran parks steele vaughn becker holt deleon barker terry hale leon hail "
        "benson haynes horton miles lyons pham graves bush thornton wolfe warner cabrera "
        "mckinney mann zimmerman dawson lara fletcher page mccarthy love robles cervantes "
        "solis erickson reeves chang klein salinas fuentes baldwin daniel simon velasquez "
        "hardy higgins aguirre lin cummings chandler sharp barber bowen ochoa dennis robbins "
        "liu ramsey francis griffith paul blair oconnor cardenas pacheco cross calderon quinn "
        "moss swanson chan rivas khan rodgers serrano fitzgerald rosales stevenson christensen "
        "manning gill curry mclaughlin harmon mcgee gross doyle garner newton burgess reese "
        "walton blake trujillo adkins brady goodman roman webster goodwin fischer huang potter "
        "delacruz montoya todd wu hines mullins castaneda malone cannon tate mack sherman").split()
# Card owners also carry accented names, which the card search folds (jose finds José).
ACCENTED_FIRST = ["José", "Zoë", "Renée", "Chloé", "Jürgen", "Søren", "Åsa", "Françoise",
                  "Inés", "Björn"]
ACCENTED_LAST = ["Müller", "Gómez", "Løvaas", "Núñez", "Östberg", "Dvořák", "Lefèvre",
                 "Šimić", "Çelik", "Ibáñez"]
COMMON_PASSWORDS = ("123456 password 123456789 12345678 12345 qwerty abc123 football 1234567 "
                    "monkey 111111 letmein 1234 1234567890 dragon baseball sunshine iloveyou "
                    "trustno1 princess adobe123 123123 welcome login admin qwerty123 solo "
                    "1q2w3e4r master 666666 photoshop 1qaz2wsx qwertyuiop ashley mustang "
                    "121212 starwars 654321 bailey access flower 555555 passw0rd shadow "
                    "lovely 7777777 michael !@#$%^&* jesus password1 superman hello charlie "
                    "888888 696969 hottie freedom aa123456 qazwsx ninja azerty 123321 "
                    "hunter2 Pässwörd! 秘密のパスワード").split()
WORDS = ("apple river stone tiger ocean silver maple rocket winter summer purple falcon "
         "garden castle thunder shadow crystal forest meadow planet canyon harbor lantern "
         "marble pepper violet copper willow coral ember frost glacier").split()
HASH_CHARS = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

# (domain, share of all records); the rest goes to a Zipf tail of TAIL_DOMAINS domains.
BIG_DOMAINS = [("bigcorp.example", 0.12), ("mail.example", 0.08), ("example.com", 0.06),
               ("example.net", 0.045), ("example.org", 0.035), ("webmail.example", 0.03),
               ("megacorp.example", 0.02), ("university.example", 0.015)]
TAIL_DOMAINS = 20000
# (BIN, share of cards, length). The rest is spread over random BINs.
SHARED_BINS = [("411111", 0.18, 16), ("555555", 0.10, 16), ("400000", 0.09, 16),
               ("424242", 0.07, 16), ("378282", 0.06, 15), ("601111", 0.05, 16),
               ("510510", 0.04, 16), ("222300", 0.03, 16), ("353011", 0.03, 16),
               ("622126", 0.02, 19), ("371449", 0.02, 15), ("400005", 0.02, 19)]
BANKS = ["First Example Bank", "Example Savings", "Demo Credit Union", "Test National Bank",
         "Sample Trust", "Placeholder Bancorp", "Fictional Federal", "Mock Mutual",
         "Stub State Bank", "Acme Bank", "Globex Finance", "Initech Credit",
         "Umbrella Savings", "Hooli Bank", "Vandelay Credit", "Northwind Bank",
         "Contoso Bank", "Fabrikam Finance", "Tailspin Credit Union", "Wingtip Bank",
         "Banco Ejemplo", "Banque Exemple", "Beispielbank", "Banca Esempio",
         "Example Bank of Åland", "Crédit Exemple", "Caixa Exemplo", "Bank Contoh",
         "Sample Bank Zürich", "Demo Bank Polska"]
BREACH_TYPES = ["Database", "Database", "Database", "Scrape", "Stealer logs", "Combolist",
                "Paste"]
CATEGORIES = ["Social network", "E-commerce", "Forum", "Gaming", "Dating", "Business services",
              "Healthcare", "Education", "Travel", "Technology", "Finance", "Malware"]
COUNTRIES = [("United States", "English"), ("Germany", "German"), ("France", "French"),
             ("United Kingdom", "English"), ("Brazil", "Portuguese"), ("Japan", "Japanese"),
             ("Spain", "Spanish"), ("Unknown", "Unknown"), ("Russia", "Russian"),
             ("India", "English")]
PW_TYPES = ["plaintext", "md5", "sha1", "bcrypt", "none"]
DATA_TYPES = ["email", "username", "password", "password_hash", "ip_address", "phone_number",
              "first_name", "last_name", "social_security_number", "bitcoin_address"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def uuid4(rng):
    h = "%032x" % rng.getrandbits(128)
    return "%s-%s-4%s-%s%s-%s" % (h[:8], h[8:12], h[13:16], "89ab"[int(h[16], 16) & 3],
                                  h[17:20], h[20:32])


def cumulative(weights):
    return list(itertools.accumulate(weights))


def zipf_weights(n, s):
    return [1.0 / (k ** s) for k in range(1, n + 1)]


def js(s):
    """A JSON string literal (non-ASCII kept as UTF-8)."""
    return json.dumps(s, ensure_ascii=False)


def gen_breaches(rng, n):
    out = []
    for i in range(n):
        cat = rng.choice(CATEGORIES)
        country, lang = rng.choice(COUNTRIES)
        btype = rng.choice(BREACH_TYPES)
        name = "%s %s %d" % (rng.choice(WORDS).capitalize(), cat.split()[0], i)
        domain = "" if btype in ("Stealer logs", "Combolist") else "site%d.example" % i
        year = rng.randint(2008, 2025)
        date = "%04d-%02d-%02d" % (year, rng.randint(1, 12), rng.randint(1, 28))
        if i % 3 == 0:  # the other accepted date form
            date = "%s-%s-%s" % (date[8:], MONTHS[int(date[5:7]) - 1], date[:4])
        b = {"uuid": uuid4(rng), "source_name": name, "site_domain": domain,
             "date_leaked": date, "breach_type": btype, "site_categories": cat,
             "site_country": country, "site_language": lang,
             "password_types": rng.choice(PW_TYPES),
             "leaked_data_types": ",".join(sorted(rng.sample(DATA_TYPES, rng.randint(2, 6)))),
             "description": "Synthetic benchmark breach %d: %s accounts of a fictional %s "
                            "service, leaked in %d." % (i, cat.lower(), country, year)}
        if rng.random() < 0.4:
            b["service_article_url"] = "https://news.example/breaches/%d" % i
        if rng.random() < 0.5:
            b["site_logo"] = "https://logos.example/%d.png" % i
        out.append(b)
    return out


def gen_records(rng, breaches, n_records, f, sample_every):
    """Writes about n_records lines (exactly n_records: the last identity is cut short).
    Returns (sample emails, records per domain)."""
    r = rng.random
    rr = rng.randrange
    getbits = rng.getrandbits
    nb = len(breaches)
    uuids = [b["uuid"] for b in breaches]
    # Skewed breach sizes: a few mega-breaches, many small ones.
    bcum = cumulative(zipf_weights(nb, 0.9))
    btotal = bcum[-1]
    bisect_right = bisect.bisect_right
    # Domains: big ones with fixed shares, then a Zipf tail.
    names = [d for d, _ in BIG_DOMAINS]
    weights = [w for _, w in BIG_DOMAINS]
    tail_share = 1.0 - sum(weights)
    tw = zipf_weights(TAIL_DOMAINS, 1.05)
    tsum = sum(tw)
    tail_words = WORDS
    for k in range(TAIL_DOMAINS):
        names.append("%s%d.example" % (tail_words[k % len(tail_words)], k))
        weights.append(tail_share * tw[k] / tsum)
    dcum = cumulative(weights)
    dtotal = dcum[-1]
    per_domain = [0] * len(names)
    n_per_identity_cum = cumulative([40, 25, 17, 11, 7])  # 1..5 breaches, mean 2.2
    nfirst, nlast, npw, nwords = len(FIRST), len(LAST), len(COMMON_PASSWORDS), len(WORDS)
    samples = []
    written = 0
    ident = 0
    out = []
    write = f.write
    while written < n_records:
        ident += 1
        di = bisect_right(dcum, r() * dtotal)
        if di >= len(names):
            di = len(names) - 1
        domain = names[di]
        first = FIRST[rr(nfirst)]
        last = LAST[rr(nlast)]
        style = ident & 3
        if style == 0:
            local = "%s.%s%d" % (first, last, ident)
        elif style == 1:
            local = "%s%s%d" % (first[0], last, ident)
        elif style == 2:
            local = "%s_%d" % (first, ident)
        else:
            local = "%s.%s.%d" % (last, first, ident)
        email = local + "@" + domain
        if ident % sample_every == 0:
            samples.append(email)
        user = "%s%d" % (first, ident % 9973) if r() < 0.55 else None
        if r() < 0.3:
            base_pw = COMMON_PASSWORDS[rr(npw)]
        else:
            base_pw = "%s%s%d" % (WORDS[rr(nwords)], WORDS[rr(nwords)].capitalize(), rr(10000))
        names_known = r() < 0.45
        phone = "+1 (%03d) 555-01%02d" % (200 + rr(800), rr(100)) if r() < 0.25 else None
        ssn = "9%02d-%02d-%04d" % (rr(100), 1 + rr(99), 1 + rr(9999)) if r() < 0.05 else None
        btc = ("1" + "".join(B58[rr(58)] for _ in range(33))) if r() < 0.01 else None
        k = bisect_right(n_per_identity_cum, rr(100)) + 1
        chosen = set()
        while len(chosen) < k:
            chosen.add(bisect_right(bcum, r() * btotal))
        for bi in chosen:
            if written >= n_records:
                break
            parts = ['{"breach_uuid":"', uuids[bi], '","email":"', email, '"']
            if user:
                parts += [',"user_name":"', user, '"']
            if names_known:
                parts += [',"first_name":"', first.capitalize(), '","last_name":"',
                          last.capitalize(), '"']
            x = r()
            if x < 0.45:  # reused password most of the time
                pw = base_pw if r() < 0.7 else base_pw + "!"
                parts += [',"password":', js(pw)]
            elif x < 0.80:
                y = r()
                if y < 0.7:
                    parts += [',"password_hash":"', "%032x" % getbits(128), '"']
                elif y < 0.85:
                    parts += [',"password_hash":"', "%040x" % getbits(160), '"']
                else:
                    parts += [',"password_hash":"$2b$10$',
                              "".join(HASH_CHARS[rr(64)] for _ in range(53)), '"']
            if r() < 0.5:
                if r() < 0.7:
                    ip = "%s.%d" % (("192.0.2", "198.51.100", "203.0.113")[rr(3)], rr(256))
                else:
                    ip = "2001:db8:%x:%x::%x" % (rr(65536), rr(65536), rr(65536))
                parts += [',"ip_address":"', ip, '"']
            if phone:
                parts += [',"phone_number":"', phone, '"']
            if ssn:
                parts += [',"social_security_number":"', ssn, '"']
            if btc:
                parts += [',"bitcoin_address":"', btc, '"']
            if r() < 0.1:
                parts += [',"other_attributes":{"country":"US","signup_year":',
                          str(2005 + rr(20)), '}']
            parts.append("}\n")
            out.append("".join(parts))
            per_domain[di] += 1
            written += 1
        if len(out) >= 20000:
            write("".join(out))
            out.clear()
    write("".join(out))
    return samples, dict(zip(names, per_domain)), ident


def gen_cards(rng, n, f):
    r = rng.random
    rr = rng.randrange
    bins = [b for b, _, _ in SHARED_BINS]
    bcum = cumulative([w for _, w, _ in SHARED_BINS])
    lengths = {b: l for b, _, l in SHARED_BINS}
    bisect_right = bisect.bisect_right
    firsts = [x.capitalize() for x in FIRST] + ACCENTED_FIRST
    lasts = [x.capitalize() for x in LAST] + ACCENTED_LAST
    nf, nl, nbank = len(firsts), len(lasts), len(BANKS)
    leaks = []
    for i in range(300):
        pub = "%04d-%02d-%02d" % (2019 + rr(7), 1 + rr(12), 1 + rr(28))
        leaks.append(('"leakId":"L%03d","leakName":"Card leak %d %s","leakPublishDate":"%s",'
                      '"leakDiscoverDate":"%s"' % (i, i, WORDS[i % len(WORDS)], pub, pub)))
    lcum = cumulative(zipf_weights(300, 0.8))
    ltotal = lcum[-1]
    leak_sizes = [0] * 300
    picks = []
    for i in range(n):
        li = bisect_right(lcum, r() * ltotal)
        picks.append(li)
        leak_sizes[li] += 1
    tags = ["paid", "fresh", "free", "dump", "verified", "paid,fresh", "free,old"]
    out = []
    write = f.write
    owners = {}
    for i in range(n):
        x = r()
        bi = bisect_right(bcum, x)
        if bi < len(bins):
            b = bins[bi]
            length = lengths[b]
        else:
            b = "%d%05d" % (4 + rr(2), rr(100000))
            length = 16 if r() < 0.9 else 19
        digits = b + "%0*d" % (length - 6, rr(10 ** (length - 6)))
        y = r()
        if y < 0.15 and length == 16:
            number = "%s %s %s %s" % (digits[:4], digits[4:8], digits[8:12], digits[12:])
        elif y < 0.25 and length == 16:
            number = "%s-%s-%s-%s" % (digits[:4], digits[4:8], digits[8:12], digits[12:])
        else:
            number = digits
        fi = rr(nf)
        owner = "%s %s" % (firsts[fi], lasts[rr(nl)])
        owners[fi] = owners.get(fi, 0) + 1
        created = "%04d-%02d-%02d %02d:%02d:%02d" % (2019 + rr(7), 1 + rr(12), 1 + rr(28),
                                                     rr(24), rr(60), rr(60))
        ey, em = 2024 + rr(8), 1 + rr(12)
        z = rr(3)
        if z == 0:
            expire = "%04d-%02d-%02d" % (ey, em, 28)
        elif z == 1:
            expire = "%04d-%02d" % (ey, em)
        else:
            expire = "%02d/%02d" % (em, ey % 100)
        cvv = "%04d" % rr(10000) if length == 15 else "%03d" % rr(1000)
        li = picks[i]
        out.append('{"id":"bench-%08d","createdAt":"%s","bank":%s,"number":"%s","owner":%s,'
                   '"cvv":"%s","expireDate":"%s","cvssScore":%.1f,%s,"leakSize":%d,'
                   '"leakTags":"%s"}\n' % (
                       i, created, js(BANKS[rr(nbank)]), number, js(owner), cvv, expire,
                       rr(101) / 10.0, leaks[li], leak_sizes[li], tags[rr(len(tags))]))
        if len(out) >= 20000:
            write("".join(out))
            out.clear()
    write("".join(out))
    return {firsts[k]: v for k, v in owners.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--cards", type=int, default=1_000_000)
    ap.add_argument("--breaches", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", required=True)
    ap.add_argument("--samples", type=int, default=20000,
                    help="how many existing emails to list for the load scripts")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)

    breaches = gen_breaches(rng, a.breaches)
    with open(os.path.join(a.out, "breaches.jsonl"), "w", encoding="utf-8") as f:
        for b in breaches:
            f.write(json.dumps(b, ensure_ascii=False) + "\n")

    # ~2.2 records per identity: sample every k-th identity to get about --samples emails.
    every = max(1, int(a.records / 2.2 / a.samples))
    with open(os.path.join(a.out, "records.jsonl"), "w", encoding="utf-8") as f:
        emails, per_domain, identities = gen_records(random.Random(a.seed * 1000003 + 1),
                                                     breaches, a.records, f, every)
    with open(os.path.join(a.out, "cards.jsonl"), "w", encoding="utf-8") as f:
        owners = gen_cards(random.Random(a.seed * 1000003 + 2), a.cards, f)

    with open(os.path.join(a.out, "emails.txt"), "w") as f:
        f.write("\n".join(emails) + "\n")
    # Domains with at least two full pages of 100, so there is a token to follow.
    pageable = sorted(((d, c) for d, c in per_domain.items() if c >= 200),
                      key=lambda dc: -dc[1])
    with open(os.path.join(a.out, "domains.txt"), "w") as f:
        f.write("".join("%s\n" % d for d, _ in pageable))
    with open(os.path.join(a.out, "bins.txt"), "w") as f:
        f.write("".join("%s\n" % b for b, _, _ in SHARED_BINS))
    # Owner words: the ASCII first names (lower-case, as a user would type them).
    with open(os.path.join(a.out, "owners.txt"), "w") as f:
        f.write("".join("%s\n" % w for w in FIRST))
    top = sorted(per_domain.items(), key=lambda dc: -dc[1])[:10]
    manifest = {"seed": a.seed, "breaches": len(breaches), "records": a.records,
                "cards": a.cards, "identities": identities, "sample_emails": len(emails),
                "pageable_domains": len(pageable),
                "pageable_domain_records": {"max": pageable[0][1] if pageable else 0,
                                            "min": pageable[-1][1] if pageable else 0},
                "top_domains": top,
                "bin_shares": {b: w for b, w, _ in SHARED_BINS}}
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(json.dumps({k: manifest[k] for k in ("records", "cards", "identities",
                                                "sample_emails", "pageable_domains")}),
          file=sys.stderr)


if __name__ == "__main__":
    main()
