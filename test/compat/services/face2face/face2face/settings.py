# Stand-in: the one setting server.py reads, with face2face's default (its getenv default is
# True, which is not in ('true', '1', 't'), so the real default is False).
ALLOW_EMBEDDING_SAVE_ON_SERVER = False
