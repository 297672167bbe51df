# Flask-Limiter, as its README sets it up, with the moving window and its headers on.
from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

app = Flask(__name__)
app.config["RATELIMIT_HEADERS_ENABLED"] = True
limiter = Limiter(
    get_remote_address,
    app=app,
    default_limits=["200 per day", "50 per hour"],
    storage_uri="memory://",
    strategy="moving-window",
)

@app.route("/slow")
@limiter.limit("1 per day")
def slow():
    return ":("

@app.route("/medium")
@limiter.limit("5/minute", override_defaults=False)
def medium():
    return ":|"
