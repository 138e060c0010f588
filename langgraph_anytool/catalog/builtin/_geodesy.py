"""Distances and bearings on the WGS-84 ellipsoid (Vincenty's formulae) and on a sphere (haversine)."""

from __future__ import annotations

import math

WGS84_A = 6378137.0
WGS84_F = 1 / 298.257223563
WGS84_B = (1 - WGS84_F) * WGS84_A
EARTH_RADIUS_KM = 6371.0088  # mean radius (IUGG)


def check_point(lat: float, lon: float) -> None:
    """ValueError unless -90 ≤ lat ≤ 90 and -180 ≤ lon ≤ 180."""
    if not -90.0 <= lat <= 90.0:
        raise ValueError(f"latitude must be between -90 and 90, got {lat}")
    if not -180.0 <= lon <= 180.0:
        raise ValueError(f"longitude must be between -180 and 180, got {lon}")


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance on a sphere of the Earth's mean radius."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def spherical_bearing(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Initial great-circle bearing in degrees [0, 360)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dl = math.radians(lon2 - lon1)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return (math.degrees(math.atan2(y, x)) + 360.0) % 360.0


def _ab(u_sq: float) -> tuple[float, float]:
    a = 1 + u_sq / 16384 * (4096 + u_sq * (-768 + u_sq * (320 - 175 * u_sq)))
    b = u_sq / 1024 * (256 + u_sq * (-128 + u_sq * (74 - 47 * u_sq)))
    return a, b


def _delta_sigma(b: float, sin_s: float, cos_s: float, cos_2sm: float) -> float:
    return b * sin_s * (cos_2sm + b / 4 * (cos_s * (-1 + 2 * cos_2sm**2)
                                           - b / 6 * cos_2sm * (-3 + 4 * sin_s**2) * (-3 + 4 * cos_2sm**2)))


def vincenty_inverse(lat1: float, lon1: float, lat2: float, lon2: float) -> tuple[float, float]:
    """(distance in km, initial bearing in degrees) on WGS-84; spherical fallback if it does not converge."""
    f = WGS84_F
    u1 = math.atan((1 - f) * math.tan(math.radians(lat1)))
    u2 = math.atan((1 - f) * math.tan(math.radians(lat2)))
    big_l = math.radians(lon2 - lon1)
    sin_u1, cos_u1, sin_u2, cos_u2 = math.sin(u1), math.cos(u1), math.sin(u2), math.cos(u2)
    lam = big_l
    for _ in range(200):
        sin_l, cos_l = math.sin(lam), math.cos(lam)
        sin_s = math.hypot(cos_u2 * sin_l, cos_u1 * sin_u2 - sin_u1 * cos_u2 * cos_l)
        if sin_s == 0:
            return 0.0, 0.0
        cos_s = sin_u1 * sin_u2 + cos_u1 * cos_u2 * cos_l
        sigma = math.atan2(sin_s, cos_s)
        sin_a = cos_u1 * cos_u2 * sin_l / sin_s
        cos2_a = 1 - sin_a**2
        cos_2sm = cos_s - 2 * sin_u1 * sin_u2 / cos2_a if cos2_a else 0.0
        c = f / 16 * cos2_a * (4 + f * (4 - 3 * cos2_a))
        prev = lam
        lam = big_l + (1 - c) * f * sin_a * (sigma + c * sin_s * (cos_2sm + c * cos_s * (-1 + 2 * cos_2sm**2)))
        if abs(lam - prev) < 1e-12:
            break
    else:  # nearly antipodal points: fall back to the sphere
        return haversine_km(lat1, lon1, lat2, lon2), spherical_bearing(lat1, lon1, lat2, lon2)
    u_sq = cos2_a * (WGS84_A**2 - WGS84_B**2) / WGS84_B**2
    big_a, big_b = _ab(u_sq)
    s = WGS84_B * big_a * (sigma - _delta_sigma(big_b, sin_s, cos_s, cos_2sm))
    bearing = math.degrees(math.atan2(cos_u2 * math.sin(lam), cos_u1 * sin_u2 - sin_u1 * cos_u2 * math.cos(lam)))
    return s / 1000.0, (bearing + 360.0) % 360.0


def vincenty_direct(lat: float, lon: float, bearing: float, distance_km: float) -> tuple[float, float, float]:
    """(lat, lon, final bearing) reached from a point after `distance_km` along an initial bearing (WGS-84)."""
    f = WGS84_F
    a1 = math.radians(bearing)
    s = distance_km * 1000.0
    tan_u1 = (1 - f) * math.tan(math.radians(lat))
    cos_u1 = 1 / math.sqrt(1 + tan_u1**2)
    sin_u1 = tan_u1 * cos_u1
    sigma1 = math.atan2(tan_u1, math.cos(a1))
    sin_a = cos_u1 * math.sin(a1)
    cos2_a = 1 - sin_a**2
    u_sq = cos2_a * (WGS84_A**2 - WGS84_B**2) / WGS84_B**2
    big_a, big_b = _ab(u_sq)
    sigma = s / (WGS84_B * big_a)
    for _ in range(200):
        cos_2sm = math.cos(2 * sigma1 + sigma)
        sin_s, cos_s = math.sin(sigma), math.cos(sigma)
        prev = sigma
        sigma = s / (WGS84_B * big_a) + _delta_sigma(big_b, sin_s, cos_s, cos_2sm)
        if abs(sigma - prev) < 1e-12:
            break
    cos_2sm = math.cos(2 * sigma1 + sigma)
    sin_s, cos_s = math.sin(sigma), math.cos(sigma)
    x = sin_u1 * sin_s - cos_u1 * cos_s * math.cos(a1)
    lat2 = math.atan2(sin_u1 * cos_s + cos_u1 * sin_s * math.cos(a1), (1 - f) * math.hypot(sin_a, x))
    lam = math.atan2(sin_s * math.sin(a1), cos_u1 * cos_s - sin_u1 * sin_s * math.cos(a1))
    c = f / 16 * cos2_a * (4 + f * (4 - 3 * cos2_a))
    big_l = lam - (1 - c) * f * sin_a * (sigma + c * sin_s * (cos_2sm + c * cos_s * (-1 + 2 * cos_2sm**2)))
    lon2 = (lon + math.degrees(big_l) + 540.0) % 360.0 - 180.0
    final = (math.degrees(math.atan2(sin_a, -x)) + 360.0) % 360.0
    return math.degrees(lat2), lon2, final


def midpoint(lat1: float, lon1: float, lat2: float, lon2: float) -> tuple[float, float]:
    """Great-circle midpoint of two points."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    l1, dl = math.radians(lon1), math.radians(lon2 - lon1)
    bx, by = math.cos(p2) * math.cos(dl), math.cos(p2) * math.sin(dl)
    lat = math.atan2(math.sin(p1) + math.sin(p2), math.hypot(math.cos(p1) + bx, by))
    lon = l1 + math.atan2(by, math.cos(p1) + bx)
    return math.degrees(lat), (math.degrees(lon) + 540.0) % 360.0 - 180.0


_COMPASS = ("N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW")


def compass_point(bearing: float) -> str:
    """16-point compass name of a bearing in degrees."""
    return _COMPASS[int((bearing % 360.0) / 22.5 + 0.5) % 16]


_GEOHASH = "0123456789bcdefghjkmnpqrstuvwxyz"


def geohash_encode(lat: float, lon: float, precision: int) -> str:
    """Standard base-32 geohash of a point."""
    lat_rng, lon_rng = [-90.0, 90.0], [-180.0, 180.0]
    out: list[str] = []
    bits, ch, even = 0, 0, True
    while len(out) < precision:
        rng, val = (lon_rng, lon) if even else (lat_rng, lat)
        mid = (rng[0] + rng[1]) / 2
        ch <<= 1
        if val >= mid:
            ch |= 1
            rng[0] = mid
        else:
            rng[1] = mid
        even = not even
        bits += 1
        if bits == 5:
            out.append(_GEOHASH[ch])
            bits, ch = 0, 0
    return "".join(out)


def geohash_decode(code: str) -> tuple[float, float, float, float]:
    """(lat, lon, lat error, lon error) of a geohash cell's centre."""
    lat_rng, lon_rng = [-90.0, 90.0], [-180.0, 180.0]
    even = True
    for char in code.lower():
        idx = _GEOHASH.find(char)
        if idx < 0:
            raise ValueError(f"invalid geohash character {char!r}")
        for shift in range(4, -1, -1):
            rng = lon_rng if even else lat_rng
            mid = (rng[0] + rng[1]) / 2
            if idx >> shift & 1:
                rng[0] = mid
            else:
                rng[1] = mid
            even = not even
    return ((lat_rng[0] + lat_rng[1]) / 2, (lon_rng[0] + lon_rng[1]) / 2,
            (lat_rng[1] - lat_rng[0]) / 2, (lon_rng[1] - lon_rng[0]) / 2)
