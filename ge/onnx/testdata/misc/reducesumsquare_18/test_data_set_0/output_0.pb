ByJŒ+AÖ
ŠA¥DA¡í’A