/* The structs of MPI's MINLOC/MAXLOC pair types (MPI_FLOAT_INT ... MPI_2INT, and Fortran's
 * MPI_2REAL, MPI_2DOUBLE_PRECISION as float_float, double_double), laid out as MPI lays
 * them out: the value, then the index, padding included. */
#pragma once

typedef struct {
  float v;
  int i;
} float_int;
typedef struct {
  double v;
  int i;
} double_int;
typedef struct {
  long v;
  int i;
} long_int;
typedef struct {
  int v;
  int i;
} int_int;
typedef struct {
  short v;
  int i;
} short_int;
typedef struct {
  long double v;
  int i;
} long_double_int;
typedef struct {
  float v;
  float i;
} float_float;
typedef struct {
  double v;
  double i;
} double_double;
