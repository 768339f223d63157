"""What the benchmark readers share: one HTTP request on 127.0.0.1, and the dashboard's sign-in (the login
form's csrf field and cookie, then the admin token posted to /admin/login). Standard library only."""
import http.client
import re
import sys
import urllib.parse


def request(port, method, path, headers=None, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response, data


def cookies(response):
    return [h.split(";", 1)[0] for k, h in response.getheaders() if k.lower() == "set-cookie"]


def sign_in(port, admin_token):
    """The headers of a signed-in dashboard session: {"Cookie": ...}."""
    form, page = request(port, "GET", "/admin")
    csrf = re.search(rb'name="csrf" value="([^"]+)"', page).group(1).decode()
    login_cookie = "; ".join(c for c in cookies(form) if not c.endswith("="))
    fields = urllib.parse.urlencode({"csrf": csrf, "token": admin_token})
    signed, _ = request(
        port,
        "POST",
        "/admin/login",
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": login_cookie},
        fields,
    )
    session = "; ".join(c for c in cookies(signed) if not c.endswith("="))
    if signed.status != 303 or not session:
        sys.exit(f"{sys.argv[0]}: sign-in failed: {signed.status}")
    return {"Cookie": session}
