"""GET /breaches and GET /breaches/{uuid}: order, limits, shapes and exact values."""
import unittest

from harness import ServerTest, fixture

DELTA_FIELDS = None


class Catalog(ServerTest):
    @classmethod
    def populate(cls, ctl):
        p = ctl.import_("breaches", fixture("breaches.jsonl"))
        # The one breach without a uuid gets a generated one, printed with its name.
        line = p.stdout.decode().strip()
        cls.delta_uuid, name = line.split("\t")
        assert name == "Delta Leak", line

    def test_list_is_newest_first_then_by_name(self):
        st, body = self.srv.get("/v7/breaches", key=self.key)
        self.assertEqual(st, 200)
        self.assertEqual([b["source_name"] for b in body],
                         ["Delta Leak", "Beta Shop", "Gamma Games", "Alpha Forum"])

    def test_list_element_has_the_list_shape_in_order(self):
        st, body = self.srv.get("/v7/breaches", key=self.key)
        self.assertEqual(list(body[1].keys()), [
            "uuid", "source_name", "site_domain", "date_leaked", "breach_type",
            "site_categories", "site_country", "site_language", "password_types",
            "leaked_data_types", "description", "service_article_url", "pwned_count",
            "site_name", "site_logo", "heroic_article_url"])
        self.assertEqual(body[1], {
            "uuid": "22222222-2222-4222-8222-222222222222",
            "source_name": "Beta Shop",
            "site_domain": "beta.example",
            "date_leaked": "14-Feb-2021",
            "breach_type": "Database",
            "site_categories": "E-commerce",
            "site_country": "Germany",
            "site_language": "German",
            "password_types": "plaintext",
            "leaked_data_types": "email,password,phone_number",
            "description": "Beta Shop customers \"with\" quotes\\backslash.",
            "service_article_url": "https://breachd.example/a/beta",
            "pwned_count": 0,
            "site_name": "Beta Shop",
            "site_logo": None,
            "heroic_article_url": "https://breachd.example/a/beta",
        })

    def test_dates_are_dd_mon_yyyy(self):
        st, body = self.srv.get("/v7/breaches", key=self.key)
        self.assertEqual([b["date_leaked"] for b in body],
                         ["09-Aug-2023", "14-Feb-2021", "14-Feb-2021", "01-May-2019"])

    def test_number_of_records_limits_the_list(self):
        st, body = self.srv.get("/v7/breaches?number_of_records=2", key=self.key)
        self.assertEqual([b["source_name"] for b in body], ["Delta Leak", "Beta Shop"])
        st, body = self.srv.get("/v7/breaches?number_of_records=1000", key=self.key)
        self.assertEqual(len(body), 4)

    def test_number_of_records_bounds(self):
        for bad in ("0", "1001", "-1"):
            self.assertError("/v7/breaches?number_of_records=" + bad, 422, "validation_error")
        for bad in ("abc", "1.5", "1e2", "0x10", "%201"):
            self.assertError("/v7/breaches?number_of_records=" + bad, 400, "bad_request")

    def test_single_breach_has_the_single_shape(self):
        st, body = self.srv.get("/v7/breaches/" + self.delta_uuid, key=self.key)
        self.assertEqual(st, 200)
        self.assertEqual(body, {
            "uuid": self.delta_uuid,
            "site_name": "Delta Leak",
            "site_domain": "delta.example",
            "date_leaked": "09-Aug-2023",
            "site_categories": "Malware",
            "site_country": "Unknown",
            "site_language": "Unknown",
            "password_types": "plaintext",
            "leaked_data_types": "email,password,social_security_number",
            "description": "Delta stealer logs.",
            "service_article_url": "https://breachd.example/a/delta",
            "pwned_count": 5000,
            "site_logo": "https://delta.example/logo.png",
            "heroic_article_url": "https://breachd.example/a/delta",
        })
        self.assertEqual(list(body)[-3:], ["pwned_count", "site_logo", "heroic_article_url"])
        self.assertNotIn("breach_type", body)

    def test_uuid_is_case_insensitive(self):
        st, body = self.srv.get("/v7/breaches/33333333-3333-4333-8333-333333333333".upper()
                                .replace("/V7/BREACHES/", "/v7/breaches/"), key=self.key)
        self.assertEqual(st, 200)
        self.assertEqual(body["site_name"], "Gamma Games")
        self.assertIsNone(body["service_article_url"])

    def test_malformed_uuid_is_422(self):
        for bad in ("abc", "33333333-3333-4333-8333-33333333333", "33333333333343338333333333333333",
                    "3333333g-3333-4333-8333-333333333333"):
            self.assertError("/v7/breaches/" + bad, 422, "validation_error")

    def test_unknown_uuid_is_404(self):
        self.assertError("/v7/breaches/44444444-4444-4444-8444-444444444444", 404, "not_found")

    def test_single_breach_takes_no_parameters(self):
        self.assertError("/v7/breaches/" + self.delta_uuid + "?number_of_records=1", 400,
                         "bad_request")


class EmptyCatalog(ServerTest):
    def test_empty_store_lists_nothing(self):
        st, body = self.srv.get("/v7/breaches", key=self.key)
        self.assertEqual((st, body), (200, []))


if __name__ == "__main__":
    unittest.main()
