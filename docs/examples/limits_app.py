# Flask-Limiter with its headers on and limits' moving window.
from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

app = Flask(__name__)
app.config["RATELIMIT_HEADERS_ENABLED"] = True
limiter = Limiter(get_remote_address, app=app, strategy="moving-window")

@app.route("/api")
@limiter.limit("5/minute")
def api():
    return "ok"
